// The console's frame: who is signed in, the project switcher, the menu,
// the live-update state, and the page of the current path.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useSyncExternalStore } from "react";
import { Button, ErrorMessage, Link, Loading } from "./components";
import { authPolicy, credentials } from "./credentials";
import { useLiveUpdates } from "./live";
import { AgentPage } from "./pages/agent";
import { AgentsPage } from "./pages/agents";
import { AuditPage } from "./pages/audit";
import { KeysPage } from "./pages/keys";
import { MembersPage } from "./pages/members";
import { SignInPage } from "./pages/sign-in";
import { TaskPage } from "./pages/task";
import { WebhookPage, WebhooksPage } from "./pages/webhooks";
import { navigate, type Route, routeOf, usePath } from "./router";
import { type Project, statusOf, useTRPC } from "./trpc";

export function useCredentials() {
  return useSyncExternalStore(credentials.subscribe, credentials.get);
}

const menu = [
  { to: "/", label: "Agents", pages: ["agents", "agent", "task"] },
  { to: "/webhooks", label: "Webhooks", pages: ["webhooks", "webhook"] },
  { to: "/keys", label: "API keys", pages: ["keys"], admin: true },
  { to: "/members", label: "Members", pages: ["members"], admin: true },
  { to: "/audit", label: "Audit log", pages: ["audit"], admin: true },
];

export function App() {
  const path = usePath();
  const route = routeOf(path);
  const signedIn = useCredentials();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // Under AUTH_POLICY=all nothing answers without a credential: the console asks for one before any call.
  const mustSignIn = signedIn.kind === "none" && authPolicy === "all";
  const projects = useQuery({ ...trpc.projects.list.queryOptions({}), staleTime: 60_000, enabled: !mustSignIn });
  const refused = mustSignIn || statusOf(projects.error) === 401 || statusOf(projects.error) === 403;

  useEffect(() => {
    // A credential the service no longer takes (an expired token, a revoked key): back to signing in.
    if (refused && route.page !== "sign-in") {
      if (signedIn.kind !== "none") credentials.set({ kind: "none" });
      navigate("/sign-in");
    }
  }, [refused, route.page, signedIn.kind]);

  useEffect(() => {
    const title = menu.find((item) => item.pages.includes(route.page))?.label ?? "Sign in";
    document.title = `${title} — Agent Management console`;
  }, [route.page]);

  if (route.page === "sign-in") {
    return (
      <Frame>
        <SignInPage
          expired={signedIn.kind === "none" && refused && !mustSignIn}
          onSignedIn={() => {
            queryClient.clear();
            navigate("/");
          }}
        />
      </Frame>
    );
  }
  if (projects.isPending) {
    return (
      <Frame>
        <Loading what="the console" />
      </Frame>
    );
  }
  if (projects.error || !projects.data) {
    return (
      <Frame>
        <ErrorMessage error={projects.error} />
      </Frame>
    );
  }
  const list = projects.data;
  const project = list.find((item) => item.id === signedIn.projectId) ?? list[0];
  if (!project) {
    return (
      <Frame>
        <p>You are a member of no project yet. An admin of a project can add you to it.</p>
      </Frame>
    );
  }
  return (
    <Frame projects={list} project={project} route={route}>
      <Page key={project.id} route={route} project={project} />
    </Frame>
  );
}

function Page({ route, project }: { route: Route; project: Project }) {
  switch (route.page) {
    case "agents":
      return <AgentsPage />;
    case "agent":
      return <AgentPage agentId={route.agentId} />;
    case "task":
      return <TaskPage agentId={route.agentId} taskId={route.taskId} />;
    case "webhooks":
      return <WebhooksPage />;
    case "webhook":
      return <WebhookPage webhookId={route.webhookId} />;
    case "keys":
      return <KeysPage project={project} />;
    case "members":
      return <MembersPage project={project} />;
    case "audit":
      return <AuditPage project={project} />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            No page of the console is here. <Link to="/">To the agents</Link>
          </p>
        </>
      );
  }
}

function LiveBadge() {
  const live = useLiveUpdates();
  const text = live.state === "live" ? "Live" : live.state === "connecting" ? "Reconnecting…" : "Not live";
  return (
    <span className={`live live-${live.state}`} role="status" title={live.reason} data-live={live.state}>
      {text}
    </span>
  );
}

function Frame({
  children,
  projects,
  project,
  route,
}: {
  children: React.ReactNode;
  projects?: Project[];
  project?: Project;
  route?: Route;
}) {
  const signedIn = useCredentials();
  const queryClient = useQueryClient();
  const who = signedIn.kind === "token" ? signedIn.email : signedIn.kind === "key" ? "API key" : "No sign-in";
  return (
    <div className="frame">
      <a className="skip" href="#main">
        Skip to the page
      </a>
      <header className="top">
        <Link to="/" className="brand">
          Agent console
        </Link>
        {project && projects && (
          <ProjectSwitcher
            projects={projects}
            project={project}
            onSwitch={(id) => {
              credentials.set({ ...signedIn, projectId: id });
              queryClient.removeQueries({ predicate: (query) => query.queryKey[0]?.toString() !== "projects,list" });
              navigate("/");
            }}
          />
        )}
        {project && <LiveBadge key={project.id} />}
        <span className="who">{who}</span>
        {signedIn.kind === "none" ? (
          <Link to="/sign-in">Sign in</Link>
        ) : (
          <Button
            onClick={() => {
              credentials.set({ kind: "none" });
              queryClient.clear();
              navigate("/sign-in");
            }}
          >
            Sign out
          </Button>
        )}
      </header>
      {route && (
        <nav aria-label="Console" className="menu">
          <ul>
            {/* A member or viewer is no admin: their menu leaves out what only admins may see. A key's
                scopes are not known here: its menu has everything, and the service answers for them. */}
            {menu
              .filter((item) => !item.admin || !project?.role || project.role === "admin")
              .map((item) => (
                <li key={item.to}>
                  <Link to={item.to} aria-current={item.pages.includes(route.page) ? "page" : undefined}>
                    {item.label}
                  </Link>
                </li>
              ))}
          </ul>
        </nav>
      )}
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

function ProjectSwitcher({
  projects,
  project,
  onSwitch,
}: {
  projects: Project[];
  project: Project;
  onSwitch: (id: string) => void;
}) {
  if (projects.length < 2) return <span className="project">Project: {project.name}</span>;
  return (
    <label className="project">
      Project{" "}
      <select value={project.id} onChange={(event) => onSwitch(event.target.value)}>
        {projects.map((item) => (
          <option key={item.id} value={item.id}>
            {item.name}
          </option>
        ))}
      </select>
    </label>
  );
}
