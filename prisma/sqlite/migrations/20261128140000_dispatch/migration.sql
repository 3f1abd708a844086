-- AlterTable
ALTER TABLE "agents" ADD COLUMN "last_leased_at" DATETIME;
ALTER TABLE "agents" ADD COLUMN "max_running" INTEGER;
ALTER TABLE "agents" ADD COLUMN "max_running_per_key" INTEGER;

-- AlterTable
ALTER TABLE "tasks" ADD COLUMN "concurrency_key" TEXT;

-- CreateIndex
CREATE INDEX "tasks_agent_id_status_concurrency_key_priority_run_at_created_at_id_idx" ON "tasks"("agent_id", "status", "concurrency_key", "priority" DESC, "run_at", "created_at", "id");

-- CreateIndex
CREATE INDEX "tasks_agent_id_concurrency_key_created_at_id_idx" ON "tasks"("agent_id", "concurrency_key", "created_at", "id");

