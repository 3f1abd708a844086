-- CreateTable
CREATE TABLE "projects" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "projects_pkey" PRIMARY KEY ("id")
);

-- The project everything made before projects belongs to.
INSERT INTO "projects" ("id", "name", "created_at", "updated_at") VALUES ('00000000-0000-4000-8000-000000000000', 'default', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP);

-- DropIndex
DROP INDEX "agents_created_at_id_idx";

-- DropIndex
DROP INDEX "agents_status_created_at_id_idx";

-- DropIndex
DROP INDEX "agent_metadata_key_value_created_at_agent_id_idx";

-- DropIndex
DROP INDEX "events_type_id_idx";

-- DropIndex
DROP INDEX "webhooks_created_at_id_idx";

-- AlterTable: existing rows belong to the default project
ALTER TABLE "agents" ADD COLUMN     "project_id" TEXT NOT NULL DEFAULT '00000000-0000-4000-8000-000000000000';
ALTER TABLE "agents" ALTER COLUMN "project_id" DROP DEFAULT;

-- AlterTable: existing rows belong to the default project
ALTER TABLE "agent_metadata" ADD COLUMN     "project_id" TEXT NOT NULL DEFAULT '00000000-0000-4000-8000-000000000000';
ALTER TABLE "agent_metadata" ALTER COLUMN "project_id" DROP DEFAULT;

-- AlterTable: existing rows belong to the default project
ALTER TABLE "tasks" ADD COLUMN     "project_id" TEXT NOT NULL DEFAULT '00000000-0000-4000-8000-000000000000';
ALTER TABLE "tasks" ALTER COLUMN "project_id" DROP DEFAULT;

-- AlterTable: existing rows belong to the default project
ALTER TABLE "events" ADD COLUMN     "project_id" TEXT NOT NULL DEFAULT '00000000-0000-4000-8000-000000000000';
ALTER TABLE "events" ALTER COLUMN "project_id" DROP DEFAULT;

-- AlterTable: existing rows belong to the default project
ALTER TABLE "webhooks" ADD COLUMN     "project_id" TEXT NOT NULL DEFAULT '00000000-0000-4000-8000-000000000000';
ALTER TABLE "webhooks" ALTER COLUMN "project_id" DROP DEFAULT;

-- CreateTable
CREATE TABLE "project_members" (
    "project_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "project_members_pkey" PRIMARY KEY ("project_id","user_id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "created_by" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3),
    "last_used_at" TIMESTAMP(3),
    "revoked_at" TIMESTAMP(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_events" (
    "id" BIGINT NOT NULL,
    "project_id" TEXT NOT NULL,
    "occurred_at" TIMESTAMP(3) NOT NULL,
    "action" TEXT NOT NULL,
    "actor_type" TEXT NOT NULL,
    "actor_id" TEXT,
    "actor_label" TEXT,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "request_id" TEXT,
    "client_address" TEXT,
    "details" TEXT NOT NULL,

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

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

-- CreateIndex
CREATE INDEX "agents_project_id_created_at_id_idx" ON "agents"("project_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "agents_project_id_status_created_at_id_idx" ON "agents"("project_id", "status", "created_at", "id");

-- CreateIndex
CREATE INDEX "agents_status_idx" ON "agents"("status");

-- CreateIndex
CREATE INDEX "agent_metadata_project_id_key_value_created_at_agent_id_idx" ON "agent_metadata"("project_id", "key", "value", "created_at", "agent_id");

-- CreateIndex
CREATE INDEX "events_project_id_id_idx" ON "events"("project_id", "id");

-- CreateIndex
CREATE INDEX "events_project_id_type_id_idx" ON "events"("project_id", "type", "id");

-- CreateIndex
CREATE INDEX "webhooks_project_id_created_at_id_idx" ON "webhooks"("project_id", "created_at", "id");

-- AddForeignKey
ALTER TABLE "project_members" ADD CONSTRAINT "project_members_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_members" ADD CONSTRAINT "project_members_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Before projects every user could do everything: existing users keep that, as admins of the default project.
INSERT INTO "project_members" ("project_id", "user_id", "role", "created_at")
SELECT '00000000-0000-4000-8000-000000000000', "id", 'admin', CURRENT_TIMESTAMP FROM "users";
