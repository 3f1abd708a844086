-- CreateTable
CREATE TABLE "agent_metadata" (
    "agent_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,

    PRIMARY KEY ("agent_id", "key"),
    CONSTRAINT "agent_metadata_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "task_metadata" (
    "task_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,

    PRIMARY KEY ("task_id", "key"),
    CONSTRAINT "task_metadata_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "events" (
    "id" BIGINT NOT NULL PRIMARY KEY,
    "type" TEXT NOT NULL,
    "occurred_at" DATETIME NOT NULL,
    "agent_id" TEXT NOT NULL,
    "task_id" TEXT,
    "data" TEXT NOT NULL
);

-- CreateTable
CREATE TABLE "webhooks" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "url" TEXT NOT NULL,
    "types" TEXT NOT NULL,
    "agent_id" TEXT,
    "description" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "failing_since" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "webhook_secrets" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "webhook_id" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" DATETIME,
    CONSTRAINT "webhook_secrets_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "deliveries" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "webhook_id" TEXT NOT NULL,
    "event_id" BIGINT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" DATETIME,
    "claimed_until" DATETIME,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "last_duration_ms" INTEGER,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "delivery_attempts" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "delivery_id" TEXT NOT NULL,
    "attempted_at" DATETIME NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,
    CONSTRAINT "delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "deliveries" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "outbox_cursors" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "position" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "sender" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_headers" TEXT,
    "response_body" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" DATETIME NOT NULL,

    PRIMARY KEY ("sender", "key")
);

-- CreateTable
CREATE TABLE "rate_limits" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_agents" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'idle',
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "metadata" TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO "new_agents" ("created_at", "id", "name", "status", "type", "updated_at") SELECT "created_at", "id", "name", "status", "type", "updated_at" FROM "agents";
DROP TABLE "agents";
ALTER TABLE "new_agents" RENAME TO "agents";
CREATE INDEX "agents_created_at_id_idx" ON "agents"("created_at", "id");
CREATE INDEX "agents_status_created_at_id_idx" ON "agents"("status", "created_at", "id");
CREATE TABLE "new_tasks" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "agent_id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "description" TEXT,
    "priority" INTEGER NOT NULL DEFAULT 5,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "input" TEXT,
    "result" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "metadata" TEXT NOT NULL DEFAULT '{}',
    "max_attempts" INTEGER NOT NULL DEFAULT 1,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "run_at" DATETIME NOT NULL,
    "deadline_at" DATETIME,
    "lease_id" TEXT,
    "lease_worker" TEXT,
    "lease_created_at" DATETIME,
    "lease_expires_at" DATETIME,
    "cancel_requested" BOOLEAN NOT NULL DEFAULT false,
    "error" TEXT,
    CONSTRAINT "tasks_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- Existing tasks were runnable from their creation: run_at = created_at.
INSERT INTO "new_tasks" ("agent_id", "created_at", "description", "id", "input", "priority", "result", "status", "title", "updated_at", "run_at") SELECT "agent_id", "created_at", "description", "id", "input", "priority", "result", "status", "title", "updated_at", "created_at" FROM "tasks";
DROP TABLE "tasks";
ALTER TABLE "new_tasks" RENAME TO "tasks";
CREATE UNIQUE INDEX "tasks_lease_id_key" ON "tasks"("lease_id");
CREATE INDEX "tasks_agent_id_created_at_id_idx" ON "tasks"("agent_id", "created_at", "id");
CREATE INDEX "tasks_agent_id_status_created_at_id_idx" ON "tasks"("agent_id", "status", "created_at", "id");
CREATE INDEX "tasks_agent_id_status_priority_run_at_created_at_id_idx" ON "tasks"("agent_id", "status", "priority" DESC, "run_at", "created_at", "id");
CREATE INDEX "tasks_agent_id_status_run_at_idx" ON "tasks"("agent_id", "status", "run_at");
CREATE INDEX "tasks_lease_expires_at_idx" ON "tasks"("lease_expires_at");
CREATE INDEX "tasks_status_deadline_at_idx" ON "tasks"("status", "deadline_at");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "agent_metadata_key_value_created_at_agent_id_idx" ON "agent_metadata"("key", "value", "created_at", "agent_id");

-- CreateIndex
CREATE INDEX "task_metadata_agent_id_key_value_created_at_task_id_idx" ON "task_metadata"("agent_id", "key", "value", "created_at", "task_id");

-- CreateIndex
CREATE INDEX "events_agent_id_id_idx" ON "events"("agent_id", "id");

-- CreateIndex
CREATE INDEX "events_type_id_idx" ON "events"("type", "id");

-- CreateIndex
CREATE INDEX "events_occurred_at_idx" ON "events"("occurred_at");

-- CreateIndex
CREATE INDEX "webhooks_created_at_id_idx" ON "webhooks"("created_at", "id");

-- CreateIndex
CREATE INDEX "webhook_secrets_webhook_id_created_at_idx" ON "webhook_secrets"("webhook_id", "created_at");

-- CreateIndex
CREATE INDEX "deliveries_status_next_attempt_at_idx" ON "deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "deliveries_webhook_id_created_at_id_idx" ON "deliveries"("webhook_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "deliveries_webhook_id_status_created_at_id_idx" ON "deliveries"("webhook_id", "status", "created_at", "id");

-- CreateIndex
CREATE INDEX "delivery_attempts_delivery_id_attempted_at_idx" ON "delivery_attempts"("delivery_id", "attempted_at");

-- CreateIndex
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");

