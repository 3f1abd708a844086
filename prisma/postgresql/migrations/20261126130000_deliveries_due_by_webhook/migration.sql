-- CreateIndex
CREATE INDEX "deliveries_webhook_id_status_next_attempt_at_idx" ON "deliveries"("webhook_id", "status", "next_attempt_at");
