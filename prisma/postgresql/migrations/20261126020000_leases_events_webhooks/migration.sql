-- AlterTable
ALTER TABLE "agents" ADD COLUMN     "metadata" TEXT NOT NULL DEFAULT '{}',
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "cancel_requested" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "deadline_at" TIMESTAMP(3),
ADD COLUMN     "error" TEXT,
ADD COLUMN     "lease_created_at" TIMESTAMP(3),
ADD COLUMN     "lease_expires_at" TIMESTAMP(3),
ADD COLUMN     "lease_id" TEXT,
ADD COLUMN     "lease_worker" TEXT,
ADD COLUMN     "max_attempts" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "metadata" TEXT NOT NULL DEFAULT '{}',
ADD COLUMN     "run_at" TIMESTAMP(3),
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- Existing tasks were runnable from their creation: run_at = created_at.
UPDATE "tasks" SET "run_at" = "created_at";
ALTER TABLE "tasks" ALTER COLUMN "run_at" SET NOT NULL;

-- CreateTable
CREATE TABLE "agent_metadata" (
    "agent_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "agent_metadata_pkey" PRIMARY KEY ("agent_id","key")
);

-- CreateTable
CREATE TABLE "task_metadata" (
    "task_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "task_metadata_pkey" PRIMARY KEY ("task_id","key")
);

-- CreateTable
CREATE TABLE "events" (
    "id" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "occurred_at" TIMESTAMP(3) NOT NULL,
    "agent_id" TEXT NOT NULL,
    "task_id" TEXT,
    "data" TEXT NOT NULL,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhooks" (
    "id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "types" TEXT NOT NULL,
    "agent_id" TEXT,
    "description" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "failing_since" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_secrets" (
    "id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3),

    CONSTRAINT "webhook_secrets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "deliveries" (
    "id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "event_id" BIGINT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMP(3),
    "claimed_until" TIMESTAMP(3),
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "last_duration_ms" INTEGER,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "delivery_attempts" (
    "id" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "attempted_at" TIMESTAMP(3) NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,

    CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox_cursors" (
    "name" TEXT NOT NULL,
    "position" BIGINT NOT NULL,

    CONSTRAINT "outbox_cursors_pkey" PRIMARY KEY ("name")
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
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("sender","key")
);

-- CreateTable
CREATE TABLE "rate_limits" (
    "key" TEXT NOT NULL,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT,

    CONSTRAINT "rate_limits_pkey" PRIMARY KEY ("key")
);

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

-- CreateIndex
CREATE UNIQUE INDEX "tasks_lease_id_key" ON "tasks"("lease_id");

-- CreateIndex
CREATE INDEX "tasks_agent_id_status_priority_run_at_created_at_id_idx" ON "tasks"("agent_id", "status", "priority" DESC, "run_at", "created_at", "id");

-- CreateIndex
CREATE INDEX "tasks_agent_id_status_run_at_idx" ON "tasks"("agent_id", "status", "run_at");

-- CreateIndex
CREATE INDEX "tasks_lease_expires_at_idx" ON "tasks"("lease_expires_at");

-- CreateIndex
CREATE INDEX "tasks_status_deadline_at_idx" ON "tasks"("status", "deadline_at");

-- AddForeignKey
ALTER TABLE "agent_metadata" ADD CONSTRAINT "agent_metadata_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "task_metadata" ADD CONSTRAINT "task_metadata_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_secrets" ADD CONSTRAINT "webhook_secrets_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

