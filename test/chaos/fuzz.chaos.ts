// Scenario 1: property-based fuzzing. fast-check generates requests from the
// served /openapi.json (every REST operation) and from the tRPC procedures;
// they are sent one at a time to the service running as its own process.
// Properties: no 5xx, no crash, every response as documented, and no
// rejected write (4xx) changes a row of the database (read directly).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, it } from "vitest";
import { restCheck, trpcCheck } from "./fuzz/checks.js";
import { operationsOf, type ServedDocument } from "./fuzz/document.js";
import { IdPool, learnFrom, seedPool } from "./fuzz/pool.js";
import { type Finding, findingsReport, summary } from "./fuzz/report.js";
import { isWrite } from "./fuzz/request.js";
import { rawRequestLines, restRequests } from "./fuzz/rest.js";
import { send, targetOf } from "./fuzz/send.js";
import { procedures, trpcRequests } from "./fuzz/trpc.js";
import { providers } from "./harness/databases.js";
import { changedTables, digester } from "./harness/digest.js";
import { figures } from "./harness/figures.js";
import { scenarioResources } from "./harness/scenario.js";
import { seed } from "./harness/seed.js";
import { logDir, stillServing } from "./harness/service.js";

/** Requests per database: at least 5,000 in all, as the issue asks, split over the databases. */
const requestCount = Number(process.env.CHAOS_FUZZ_REQUESTS ?? Math.ceil(5000 / providers.length));

/**
 * A request line of blank lines only is answered 408 once the head's time is
 * up: two seconds instead of the default ten keep each of those short.
 */
const env = { HEADERS_TIMEOUT_SECONDS: "2" };

describe.each(providers)("fuzzing on %s", (provider) => {
  const resources = scenarioResources();

  it(`${requestCount} generated requests: no 5xx, no crash, responses as documented, rejected writes change nothing`, async (context) => {
    const f = figures(context, "1 fuzzing", provider);
    const database = await resources.database(provider, "fuzz");
    let service = await resources.service({ databaseUrl: database.url, label: `fuzz-${provider}`, env });
    let base = new URL(service.url);
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as ServedDocument;
    const operations = operationsOf(document);
    const routerProcedures = procedures();
    const requests = fc.sample(
      fc.oneof(
        { weight: 70, arbitrary: restRequests(document, operations) },
        { weight: 28, arbitrary: trpcRequests(routerProcedures) },
        { weight: 2, arbitrary: rawRequestLines },
      ),
      { seed, numRuns: requestCount },
    );
    const pool = new IdPool();
    await seedPool(service.url, pool);
    const digests = await digester(database);
    resources.onRelease(() => digests.close());
    const checkRest = restCheck(document);
    const checkTrpc = trpcCheck(document, routerProcedures);
    const before = await digests.digest();

    const findings: Finding[] = [];
    const counts = {
      sent: 0,
      serverErrors: 0,
      unanswered: 0,
      restInvalid: 0,
      trpcInvalid: 0,
      rejectedWrites: 0,
      changedData: 0,
    };
    // A request that crashed the service is not sent again: each crash costs a restart.
    const crashers = new Set<string>();
    let skipped = 0;
    for (const [index, request] of requests.entries()) {
      const target = targetOf(request, pool);
      const key = request.raw ?? `${request.method} ${target}`;
      if (crashers.has(key)) {
        skipped++;
        continue;
      }
      const digestBefore = isWrite(request) ? await digests.digest() : undefined;
      const observed = await send(base, request, pool);
      counts.sent++;
      const finding = (kind: string, problem: string) =>
        findings.push({
          index,
          kind,
          problem,
          request,
          target,
          status: observed.status,
          body: observed.body.slice(0, 300),
        });
      if ((observed.status === 0 || request.raw !== undefined) && !(await stillServing(service))) {
        finding("crash", `the service stopped serving after: ${request.label}`);
        crashers.add(key);
        await service.kill();
        service = await resources.service({ databaseUrl: database.url, label: `fuzz-${provider}-restart`, env });
        base = new URL(service.url);
        continue;
      }
      if (observed.status === 0) {
        // A malformed request line may be answered by closing the connection; any other request needs an answer.
        if (request.expect.kind !== "raw") {
          counts.unanswered++;
          finding("unanswered", `${request.label}: ${observed.error}`);
        }
        continue;
      }
      if (observed.status >= 500) {
        counts.serverErrors++;
        finding("5xx", `${request.label} → ${observed.status}`);
      }
      if (request.expect.kind === "trpc") {
        const problems = checkTrpc(request, observed);
        if (problems.length > 0) counts.trpcInvalid++;
        for (const problem of problems) finding("tRPC invalid", problem);
      } else if (request.expect.kind !== "raw") {
        const problems = checkRest(request, observed);
        if (problems.length > 0) counts.restInvalid++;
        for (const problem of problems) finding("REST invalid", problem);
      }
      if (digestBefore && observed.status >= 400 && observed.status < 500) {
        counts.rejectedWrites++;
        const changed = changedTables(digestBefore, await digests.digest());
        if (changed.length > 0) {
          counts.changedData++;
          finding("changed data", `${request.label} → ${observed.status} changed ${changed.join(", ")}`);
        }
      }
      if (observed.status >= 200 && observed.status < 300) learnFrom(request, observed.body, pool);
    }

    let answersAtEnd = false;
    try {
      answersAtEnd =
        (await fetch(`${service.url}/agents?limit=1`, { signal: AbortSignal.timeout(10_000) })).status === 200;
    } catch {
      // Counted below.
    }
    const after = await digests.digest();
    const report = join(logDir, `fuzz-${provider}-findings.txt`);
    writeFileSync(report, findingsReport(seed, requestCount, findings));
    if (findings.length > 0)
      console.log(`fuzzing on ${provider}: findings by kind and problem (all in ${report})\n${summary(findings)}`);

    f.atLeast("requests sent (or skipped as a repeat of a crash)", counts.sent + skipped, requestCount);
    f.info("REST operations covered", operations.length);
    f.info("tRPC procedures covered", routerProcedures.length);
    f.atMost("5xx responses", counts.serverErrors, 0);
    f.atMost("crashes (process gone or not answering)", crashers.size, 0);
    f.atMost("not answering at the end", answersAtEnd && service.alive() ? 0 : 1, 0);
    f.atMost("requests without a complete response", counts.unanswered, 0);
    f.atMost("REST responses not as documented", counts.restInvalid, 0);
    f.atMost("tRPC responses not valid", counts.trpcInvalid, 0);
    f.info("rejected writes checked against the database", counts.rejectedWrites);
    f.atMost("rejected writes that changed data", counts.changedData, 0);
    f.info("tables changed in all (accepted writes)", changedTables(before, after).length);
    f.check();
  });
});
