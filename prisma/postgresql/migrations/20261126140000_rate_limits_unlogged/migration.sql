-- Counts of one-minute windows need no crash durability: an unlogged table
-- writes no WAL, so a count costs no WAL flush. After a crash of the server
-- (not a clean restart) the table starts empty, and standbys do not have it.
ALTER TABLE "rate_limits" SET UNLOGGED;
