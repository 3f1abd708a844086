import { useMutation, useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Button, Empty, ErrorMessage, Field, Loading, Section, Table, When } from "../components";
import { type Member, type Project, useTRPC } from "../trpc";

type Role = Member["role"];
const roles: Role[] = ["admin", "member", "viewer"];

function AddMember({ projectId }: { projectId: string }) {
  const trpc = useTRPC();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const add = useMutation(trpc.members.add.mutationOptions({ onSuccess: () => setEmail("") }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate({ project_id: projectId, email, role });
  };
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="Add a member">
      <Field label="E-mail">
        {(id) => <input id={id} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}
      </Field>
      <Field label="Role">
        {(id) => (
          <select id={id} value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {roles.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        )}
      </Field>
      <Button type="submit" variant="primary" disabled={add.isPending}>
        Add member
      </Button>
      <ErrorMessage error={add.error} />
    </form>
  );
}

export function MembersPage({ project }: { project: Project }) {
  const trpc = useTRPC();
  const members = useQuery(trpc.members.list.queryOptions({ project_id: project.id }));
  const update = useMutation(trpc.members.update.mutationOptions());
  const remove = useMutation(trpc.members.remove.mutationOptions());
  return (
    <>
      <h1>Members</h1>
      <AddMember projectId={project.id} />
      <Section title={`Members of ${project.name}`}>
        <ErrorMessage error={update.error ?? remove.error} />
        {members.isPending ? (
          <Loading what="members" />
        ) : members.error ? (
          <ErrorMessage error={members.error} />
        ) : members.data.length === 0 ? (
          <Empty>No members.</Empty>
        ) : (
          <Table caption="Members" head={["E-mail", "Role", "Joined", "Actions"]}>
            {members.data.map((member) => (
              <tr key={member.user_id}>
                <td>{member.email}</td>
                <td>
                  <select
                    aria-label={`Role of ${member.email}`}
                    value={member.role}
                    onChange={(e) =>
                      update.mutate({ project_id: project.id, user_id: member.user_id, role: e.target.value as Role })
                    }
                  >
                    {roles.map((value) => (
                      <option key={value}>{value}</option>
                    ))}
                  </select>
                </td>
                <td>
                  <When at={member.created_at} />
                </td>
                <td>
                  <Button
                    variant="danger"
                    aria-label={`Remove ${member.email}`}
                    onClick={() => remove.mutate({ project_id: project.id, user_id: member.user_id })}
                  >
                    Remove
                  </Button>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}
