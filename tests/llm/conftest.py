"""Fixtures for the model adapters (see ``llm_standin`` for the stand-in model service)."""

from __future__ import annotations

import pytest
from llm_standin import ScriptedModelService


@pytest.fixture
def model_service():
    """A fresh scripted stand-in for a remote model service."""
    service = ScriptedModelService()
    yield service
    service.close()
