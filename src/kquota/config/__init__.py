"""The project file ``kquota.yaml``: where it is looked for (:mod:`.file`, no pydantic), its
models and loading (:mod:`.project`) and its JSON Schema (:mod:`.schema`)."""
