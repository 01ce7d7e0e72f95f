"""Intake fixtures: the loopback stand-in for a remote model service (see tests/llm)."""

from __future__ import annotations

import pytest

from tests.llm.llm_standin import ScriptedModelService


@pytest.fixture
def model_service():
    """A scripted stand-in for a remote OpenAI-compatible model service on 127.0.0.1."""
    service = ScriptedModelService()
    yield service
    service.close()
