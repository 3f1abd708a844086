-- AlterTable
ALTER TABLE "tasks" ADD COLUMN "schedule_id" TEXT;
ALTER TABLE "tasks" ADD COLUMN "scheduled_for" DATETIME;

-- CreateTable
CREATE TABLE "schedules" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "project_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "cron" TEXT,
    "every_seconds" INTEGER,
    "timezone" TEXT NOT NULL,
    "task" TEXT NOT NULL,
    "overlap" TEXT NOT NULL,
    "catch_up" TEXT NOT NULL,
    "paused" BOOLEAN NOT NULL,
    "start_at" DATETIME,
    "end_at" DATETIME,
    "next_run_at" DATETIME,
    "last_run_at" DATETIME,
    "last_task_id" TEXT,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    CONSTRAINT "schedules_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "schedules_agent_id_created_at_id_idx" ON "schedules"("agent_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "schedules_next_run_at_idx" ON "schedules"("next_run_at");

-- CreateIndex
CREATE UNIQUE INDEX "tasks_schedule_id_scheduled_for_key" ON "tasks"("schedule_id", "scheduled_for");

