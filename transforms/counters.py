"""Names of the Beam counters the stages write, shared with the summary (no Beam import here)."""
from __future__ import annotations

NAMESPACE = "larvatus"
DEAD_LETTER_PREFIX = "dead_letter_"
ENTITY_PREFIX = "entities_"
TIME_PREFIX = "time_us_"
RECORDS_IN = "records_in"
RECORDS_OUT = "records_out"
BLANK_LINES = "blank_lines_skipped"
PROPAGATED = "entities_propagated"
AUDIT_PREFIX = "audit_"
LANGUAGE_PREFIX = "language_"   # documents per detected language
AUDIT_FLAGGED = "audit_documents_flagged"
WORKER_PROCESSES = "worker_processes"   # processes that annotated at least one document
EMPTY_DOCUMENTS = "empty_documents"
