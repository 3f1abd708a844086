-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "schedule_id" TEXT,
ADD COLUMN     "scheduled_for" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "schedules" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "cron" TEXT,
    "every_seconds" INTEGER,
    "timezone" TEXT NOT NULL,
    "task" TEXT NOT NULL,
    "overlap" TEXT NOT NULL,
    "catch_up" TEXT NOT NULL,
    "paused" BOOLEAN NOT NULL,
    "start_at" TIMESTAMP(3),
    "end_at" TIMESTAMP(3),
    "next_run_at" TIMESTAMP(3),
    "last_run_at" TIMESTAMP(3),
    "last_task_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "schedules_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "schedules_agent_id_created_at_id_idx" ON "schedules"("agent_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "schedules_next_run_at_idx" ON "schedules"("next_run_at");

-- CreateIndex
CREATE UNIQUE INDEX "tasks_schedule_id_scheduled_for_key" ON "tasks"("schedule_id", "scheduled_for");

-- AddForeignKey
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE CASCADE ON UPDATE CASCADE;

