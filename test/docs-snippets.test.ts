// Every ```sh block of README.md and docs/ runs as written, in order, one bash
// session per page, against the real app on a fresh database; a curl command
// annotated `# → NNN` must answer that status.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { docFiles, root } from "./helpers/doc-snippets.js";
import { startReceiver } from "./helpers/webhook-receiver.js";
import { startWebhookApp } from "./helpers/webhooks.js";

const execute = promisify(execFile);
const documentedServer = "http://127.0.0.1:8000";
/** Where the webhook pages' receiver listens (examples/webhook-receiver.ts's default port). */
const documentedReceiver = "http://127.0.0.1:9000";

/** What a page's snippets need of the service it talks to: the settings the page says it was started with. */
interface PageSetup {
  /** The service's settings; the shell gets them too, as a reader's shell that started the service has them. */
  env?: Record<string, string>;
  /** The sample car-market data, as `npm start` imports it into a new database. */
  sampleData?: boolean;
  /** Webhook delivery running, and a receiver at `documentedReceiver`. */
  webhooks?: boolean;
}

const pageSetups: Record<string, PageSetup> = {
  "README.md": { webhooks: true },
  "docs/api/auth.md": { env: { AUTH_POLICY: "writes", API_KEYS: "key-one,key-two" } },
  "docs/api/data.md": { sampleData: true },
  "docs/api/projects.md": { env: { AUTH_POLICY: "all" } },
  "docs/api/webhooks.md": { webhooks: true },
  "docs/http.md": { env: { RATE_LIMIT_PER_MINUTE: "100", CORS_ORIGINS: "https://app.example.com" } },
  "docs/operations.md": { env: { METRICS_TOKEN: "docs-metrics-token-0123456789abcdef" } },
};

/**
 * Records every curl call's status (`<script line> <status>`) in $CURL_LOG:
 * the page's own `-w` format, if any, is kept and the status follows it on
 * stderr. A stream read with `--max-time` ends by timing out (exit 28): that is
 * how it is meant to end. npm runs its scripts in the project.
 */
const prelude = (log: string) => `set -euo pipefail
CURL_LOG=${JSON.stringify(log)}
curl() {
  local args=() written=0 timed=0 rc=0 err
  while (($#)); do
    case "$1" in
      -w | --write-out) args+=("$1" "$2%{stderr}@@status %{http_code}\\n"); written=1; shift 2; continue ;;
      -m | --max-time) timed=1 ;;
    esac
    args+=("$1")
    shift
  done
  ((written)) || args+=(-w '%{stderr}@@status %{http_code}\\n')
  err=$(mktemp)
  command curl "\${args[@]}" 2>"$err" || rc=$?
  sed -n "s/^@@status /\${BASH_LINENO[0]} /p" "$err" >>"$CURL_LOG"
  grep -v '^@@status ' "$err" >&2 || true
  rm -f "$err"
  if ((rc == 28 && timed)); then rc=0; fi
  return "$rc"
}
npm() { (cd ${JSON.stringify(root)} && command npm "$@"); }
`;

interface Annotation {
  /** Lines of the script the command spans. */
  from: number;
  to: number;
  /** Its line in the page, for messages. */
  pageLine: number;
  status: string;
}

/** The page's ```sh blocks as one script (after `prelude`), and the statuses its commands are annotated with. */
function pageScript(text: string, preludeLines: number) {
  const lines: string[] = [];
  const annotations: Annotation[] = [];
  const pageLines = text.split("\n");
  let inBlock = false;
  let command: { from: number; pageLine: number } | undefined;
  pageLines.forEach((line, index) => {
    if (!inBlock) {
      inBlock = line === "```sh";
      if (inBlock) lines.push(`# ${index + 1}`);
      return;
    }
    if (line === "```") {
      inBlock = false;
      return;
    }
    lines.push(line);
    const scriptLine = preludeLines + lines.length;
    const comment = /^\s*#/.test(line);
    const status = /# → (\d{3})\b/.exec(line)?.[1];
    if (comment) {
      if (status) throw new Error(`line ${index + 1}: put "# → ${status}" on the command's line, not on a comment`);
      return;
    }
    command ??= { from: scriptLine, pageLine: index + 1 };
    const continued = /\\$/.test(line.replace(/\s+#.*$/, ""));
    if (status) annotations.push({ from: command.from, to: scriptLine, pageLine: index + 1, status });
    if (!continued) command = undefined;
  });
  return { script: lines.join("\n"), annotations };
}

const pages = docFiles().filter((page) => readFileSync(join(root, page), "utf8").includes("\n```sh\n"));

describe("the docs' shell snippets", () => {
  it("are on the pages that have them", () => {
    expect(pages).toContain("README.md");
    for (const page of Object.keys(pageSetups)) expect(pages).toContain(page);
  });

  const opened: { close: () => Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((thing) => thing.close()));
  });

  it.concurrent.each(pages)("in %s run as written, in order", { timeout: 90_000 }, async (page) => {
    const setup = pageSetups[page] ?? {};
    const env = setup.env ?? {};
    const app: TestApp = setup.webhooks
      ? await startWebhookApp(env)
      : await startTestApp(env, { sampleData: setup.sampleData });
    opened.push(app);
    let text = readFileSync(join(root, page), "utf8").replaceAll(documentedServer, app.baseUrl);
    if (setup.webhooks) {
      const receiver = await startReceiver();
      opened.push(receiver);
      text = text.replaceAll(documentedReceiver, new URL(receiver.url).origin);
    }

    const dir = mkdtempSync(join(tmpdir(), "docs-snippets-"));
    try {
      const log = join(dir, ".curl-statuses");
      writeFileSync(log, "");
      const head = prelude(log);
      const { script, annotations } = pageScript(text, head.split("\n").length - 1);
      writeFileSync(join(dir, ".snippets.sh"), `${head}${script}\n`);
      const run = await execute("bash", ["-euo", "pipefail", ".snippets.sh"], {
        cwd: dir,
        env: { ...process.env, ...env, DATABASE_URL: app.database.url },
        timeout: 80_000,
        maxBuffer: 64 * 1024 * 1024,
      }).catch((error: { code: number; stdout: string; stderr: string }) => error);
      const failure = "code" in run ? `exit ${run.code}\n${run.stderr.slice(-4000)}` : "";
      expect(failure, `${page}: the snippets stopped`).toBe("");

      const calls = readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((entry) => entry.split(" ").map(Number) as [number, number]);
      const seen = annotations.map(({ from, to, pageLine }) => {
        const statuses = calls.filter(([line]) => line >= from && line <= to).map(([, status]) => status);
        return `line ${pageLine}: ${statuses.join(", ") || "not run"}`;
      });
      expect(seen, `${page}: the statuses of the annotated curl commands`).toEqual(
        annotations.map(({ pageLine, status }) => `line ${pageLine}: ${status}`),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
