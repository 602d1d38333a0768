"""User text in pages (moved to :mod:`bnexplore.apps.text`; the old apps import it here)."""
from bnexplore.apps.text import md_join, md_strong, md_text, table_titles  # noqa: F401
