"""Renderers: text, markdown and JSON. They format plans and resolutions; they never compute."""
