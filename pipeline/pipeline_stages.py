"""The declared stages for any driver, and the in-process runner of them (the Redactor's; Spark's per partition)."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from larvatus import schemas
from larvatus.key_files import read_secret_file
from larvatus.settings import classifier
from larvatus.transforms.records import AnnotatedDocument, DeadLetter, Document, EncodedDocument
from larvatus.transforms.settings import AnnotationSettings
from larvatus.transforms.stage_template import Count, StageChain, no_count
from larvatus.transforms.stages import AnnotationStages, Inferred, declare

CHUNK_DOCUMENTS = 64   # documents segmented, encoded and inferred together in process


def build(settings: AnnotationSettings, processes_per_machine: int = 1) -> AnnotationStages:
    """The one declared stage list (`larvatus.transforms.stages.declare`) with this package's
    model runner and key-file reader. `processes_per_machine`: processes sharing the cores."""
    return declare(settings, classifier(settings, processes_per_machine), read_secret_file)


Outcome = Union[AnnotatedDocument, DeadLetter]


class StageRunner:
    """Runs the declared stages on documents in this process, with the job's guarantees.

    The stages before and after the model run as `StageChain`s (the per-record time
    bound, dead-letter reasons, counters: the same template the Beam job runs), the model
    on each chunk's encoded documents. Not thread-safe: one runner per thread, or a lock.
    """

    def __init__(self, settings: AnnotationSettings, keep_fields: tuple[str, ...] = (),
                 processes_per_machine: int = 1):
        self.settings = settings
        self.stages = build(settings, processes_per_machine)
        self.stages.setup()
        self._before = StageChain(self.stages.before_model, settings.record_timeout)
        self._after = StageChain(self.stages.after_model, settings.record_timeout)
        self.columns = schemas.OutputColumns.of(settings.keep_text, settings.ml, keep_fields)

    def annotate(self, documents: Sequence[Document], count: Count = no_count) -> list[Outcome]:
        """Each document's AnnotatedDocument or DeadLetter, in order."""
        outcomes: list[Outcome] = []
        for start in range(0, len(documents), CHUNK_DOCUMENTS):
            outcomes += self._chunk(documents[start:start + CHUNK_DOCUMENTS], count)
        return outcomes

    def _chunk(self, documents: Sequence[Document], count: Count) -> list[Outcome]:
        outcomes: list[Optional[Outcome]] = list(self._before.run(documents, count))
        encoded = [(i, o) for i, o in enumerate(outcomes) if isinstance(o, EncodedDocument)]
        inferred: list[Inferred] = self.stages.model.predict([o for _, o in encoded])
        after = self._after.run(inferred, count)
        for (index, _), outcome in zip(encoded, after):
            outcomes[index] = outcome
        return outcomes

    @property
    def schema(self):
        """The pyarrow schema of the annotations rows (`larvatus run`'s, for the same options)."""
        return self.columns.schema()

    def row(self, annotated: AnnotatedDocument) -> dict:
        """An annotations row, as `larvatus run` writes it (before Parquet's float32)."""
        return self.columns.row(annotated, self.settings.model_info)

    def run_stages(self, documents: Sequence[Document],
                   count: Count = no_count) -> tuple[list[dict], list[DeadLetter]]:
        """(annotation rows, dead letters) of the documents: what a driver writes."""
        rows, dead = [], []
        for outcome in self.annotate(documents, count):
            if isinstance(outcome, DeadLetter):
                dead.append(outcome)
            else:
                rows.append(self.row(outcome))
        return rows, dead

    def close(self) -> None:
        """Lets the time budget's idle worker threads end."""
        self._before.close()
        self._after.close()
