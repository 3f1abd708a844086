-- CreateTable
CREATE TABLE "projects" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL
);

-- The project everything made before projects belongs to.
INSERT INTO "projects" ("id", "name", "created_at", "updated_at") VALUES ('00000000-0000-4000-8000-000000000000', 'default', strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'), strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'));

-- CreateTable
CREATE TABLE "project_members" (
    "project_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("project_id", "user_id"),
    CONSTRAINT "project_members_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "project_members_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "project_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "created_by" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" DATETIME,
    "last_used_at" DATETIME,
    "revoked_at" DATETIME,
    CONSTRAINT "api_keys_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "audit_events" (
    "id" BIGINT NOT NULL PRIMARY KEY,
    "project_id" TEXT NOT NULL,
    "occurred_at" DATETIME NOT NULL,
    "action" TEXT NOT NULL,
    "actor_type" TEXT NOT NULL,
    "actor_id" TEXT,
    "actor_label" TEXT,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "request_id" TEXT,
    "client_address" TEXT,
    "details" TEXT NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_agents" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "project_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'idle',
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "metadata" TEXT NOT NULL DEFAULT '{}',
    CONSTRAINT "agents_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_agents" ("project_id", "created_at", "id", "metadata", "name", "status", "type", "updated_at", "version") SELECT '00000000-0000-4000-8000-000000000000', "created_at", "id", "metadata", "name", "status", "type", "updated_at", "version" FROM "agents";
DROP TABLE "agents";
ALTER TABLE "new_agents" RENAME TO "agents";
CREATE INDEX "agents_project_id_created_at_id_idx" ON "agents"("project_id", "created_at", "id");
CREATE INDEX "agents_project_id_status_created_at_id_idx" ON "agents"("project_id", "status", "created_at", "id");
CREATE INDEX "agents_status_idx" ON "agents"("status");
CREATE TABLE "new_agent_metadata" (
    "agent_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,

    PRIMARY KEY ("agent_id", "key"),
    CONSTRAINT "agent_metadata_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_agent_metadata" ("project_id", "agent_id", "created_at", "key", "value") SELECT '00000000-0000-4000-8000-000000000000', "agent_id", "created_at", "key", "value" FROM "agent_metadata";
DROP TABLE "agent_metadata";
ALTER TABLE "new_agent_metadata" RENAME TO "agent_metadata";
CREATE INDEX "agent_metadata_project_id_key_value_created_at_agent_id_idx" ON "agent_metadata"("project_id", "key", "value", "created_at", "agent_id");
CREATE TABLE "new_tasks" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "project_id" TEXT NOT NULL,
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
    "lease_duration_seconds" INTEGER,
    "cancel_requested" BOOLEAN NOT NULL DEFAULT false,
    "error" TEXT,
    CONSTRAINT "tasks_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_tasks" ("project_id", "agent_id", "attempts", "cancel_requested", "created_at", "deadline_at", "description", "error", "id", "input", "lease_created_at", "lease_duration_seconds", "lease_expires_at", "lease_id", "lease_worker", "max_attempts", "metadata", "priority", "result", "run_at", "status", "title", "updated_at", "version") SELECT '00000000-0000-4000-8000-000000000000', "agent_id", "attempts", "cancel_requested", "created_at", "deadline_at", "description", "error", "id", "input", "lease_created_at", "lease_duration_seconds", "lease_expires_at", "lease_id", "lease_worker", "max_attempts", "metadata", "priority", "result", "run_at", "status", "title", "updated_at", "version" FROM "tasks";
DROP TABLE "tasks";
ALTER TABLE "new_tasks" RENAME TO "tasks";
CREATE UNIQUE INDEX "tasks_lease_id_key" ON "tasks"("lease_id");
CREATE INDEX "tasks_agent_id_created_at_id_idx" ON "tasks"("agent_id", "created_at", "id");
CREATE INDEX "tasks_agent_id_status_created_at_id_idx" ON "tasks"("agent_id", "status", "created_at", "id");
CREATE INDEX "tasks_agent_id_status_priority_run_at_created_at_id_idx" ON "tasks"("agent_id", "status", "priority" DESC, "run_at", "created_at", "id");
CREATE INDEX "tasks_agent_id_status_run_at_idx" ON "tasks"("agent_id", "status", "run_at");
CREATE INDEX "tasks_lease_expires_at_idx" ON "tasks"("lease_expires_at");
CREATE INDEX "tasks_status_deadline_at_idx" ON "tasks"("status", "deadline_at");
CREATE TABLE "new_events" (
    "id" BIGINT NOT NULL PRIMARY KEY,
    "project_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "occurred_at" DATETIME NOT NULL,
    "agent_id" TEXT NOT NULL,
    "task_id" TEXT,
    "data" TEXT NOT NULL
);
INSERT INTO "new_events" ("project_id", "agent_id", "data", "id", "occurred_at", "task_id", "type") SELECT '00000000-0000-4000-8000-000000000000', "agent_id", "data", "id", "occurred_at", "task_id", "type" FROM "events";
DROP TABLE "events";
ALTER TABLE "new_events" RENAME TO "events";
CREATE INDEX "events_project_id_id_idx" ON "events"("project_id", "id");
CREATE INDEX "events_project_id_type_id_idx" ON "events"("project_id", "type", "id");
CREATE INDEX "events_agent_id_id_idx" ON "events"("agent_id", "id");
CREATE INDEX "events_occurred_at_idx" ON "events"("occurred_at");
CREATE TABLE "new_webhooks" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "project_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "types" TEXT NOT NULL,
    "agent_id" TEXT,
    "description" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "failing_since" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "webhooks_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_webhooks" ("project_id", "agent_id", "created_at", "description", "disabled_reason", "enabled", "failing_since", "id", "types", "updated_at", "url") SELECT '00000000-0000-4000-8000-000000000000', "agent_id", "created_at", "description", "disabled_reason", "enabled", "failing_since", "id", "types", "updated_at", "url" FROM "webhooks";
DROP TABLE "webhooks";
ALTER TABLE "new_webhooks" RENAME TO "webhooks";
CREATE INDEX "webhooks_project_id_created_at_id_idx" ON "webhooks"("project_id", "created_at", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "project_members_user_id_created_at_idx" ON "project_members"("user_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_prefix_key" ON "api_keys"("prefix");

-- CreateIndex
CREATE INDEX "api_keys_project_id_created_at_id_idx" ON "api_keys"("project_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "audit_events_project_id_id_idx" ON "audit_events"("project_id", "id");

-- CreateIndex
CREATE INDEX "audit_events_occurred_at_idx" ON "audit_events"("occurred_at");

-- Before projects every user could do everything: existing users keep that, as admins of the default project.
INSERT INTO "project_members" ("project_id", "user_id", "role", "created_at")
SELECT '00000000-0000-4000-8000-000000000000', "id", 'admin', strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now') FROM "users";
