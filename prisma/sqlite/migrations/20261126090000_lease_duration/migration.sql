-- AlterTable
ALTER TABLE "tasks" ADD COLUMN "lease_duration_seconds" INTEGER;

-- Leases taken before this column existed: the term they were taken with.
UPDATE "tasks" SET "lease_duration_seconds" = MIN(3600, MAX(5,
  CAST(ROUND((julianday("lease_expires_at") - julianday("lease_created_at")) * 86400) AS INTEGER)))
WHERE "lease_id" IS NOT NULL;
