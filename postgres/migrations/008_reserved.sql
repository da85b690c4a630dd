-- (no change: this number is kept for a migration made beside 009)
SELECT 1;
