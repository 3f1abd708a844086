import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { statement } from "../src/db/index.js";
import { createTestDatabase, type TestDatabase } from "./helpers/databases.js";
import { type ServiceProcess, startService } from "./helpers/service.js";

// docs/http.md across instances: two service processes on one database, the
// same key sent to both at once.
let database: TestDatabase;
const services: ServiceProcess[] = [];
beforeAll(async () => {
  database = await createTestDatabase(inject("templateDatabase"));
  services.push(await startService({ DATABASE_URL: database.url }), await startService({ DATABASE_URL: database.url }));
});
afterAll(async () => {
  for (const service of services) await service.kill();
  await database.drop();
});

const countByName = statement<{ n: number | bigint }, [name: string]>(
  "test_idempotency_processes_count",
  "SELECT COUNT(*) AS n FROM agents WHERE name = $1",
);

describe("one Idempotency-Key sent to two instances at once", () => {
  it("creates one agent: one 201 that ran, the other 409 or its replay", async () => {
    for (let round = 0; round < 10; round++) {
      const key = `processes-${round}-${Date.now()}`;
      const name = `across-${key}`;
      const answers = await Promise.all(
        services.flatMap((service) =>
          [0, 1].map(() =>
            fetch(`${service.baseUrl}/agents`, {
              method: "POST",
              headers: { "content-type": "application/json", "Idempotency-Key": key },
              body: JSON.stringify({ name, type: "worker" }),
            }),
          ),
        ),
      );
      const ran = answers.filter((res) => res.status === 201 && !res.headers.has("idempotent-replayed"));
      expect(ran).toHaveLength(1);
      const [first] = ran;
      const created = (await first?.json()) as { id: string };
      for (const res of answers.filter((answer) => answer !== first)) {
        expect([409, 201]).toContain(res.status);
        if (res.status === 201) {
          expect(res.headers.get("idempotent-replayed")).toBe("true");
          expect(((await res.json()) as { id: string }).id).toBe(created.id);
        } else expect(res.headers.get("retry-after")).toBe("1");
      }
      expect(Number((await database.db.get(countByName, [name]))?.n)).toBe(1);
    }
  });
});
