"""The saved plan as a file: the strict reader (:mod:`.reader`), the target it records and
its check (:mod:`.target`), the writer and the plan id (:mod:`.writer`). It imports the plan
model; the plan knows nothing of files."""
