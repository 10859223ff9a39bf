"""The exceptions of contactbench: one class per error enum of the Rust crate, all under
:class:`ContactbenchError`. The message is the Rust error's text, word for word; ``kind``
is the variant (``"non_finite"``, ``"size"``, ...), and ``path``, ``line`` and ``field``
say where, when the variant names them (else ``None``). One variant has a class of its
own, to be caught as Python's own: :class:`ProblemFileExistsError`, also a
``FileExistsError``."""

from __future__ import annotations

from typing import Optional


class ContactbenchError(Exception):
    """Base class of every error contactbench raises."""

    def __init__(
        self,
        message: str,
        *,
        kind: Optional[str] = None,
        path: Optional[str] = None,
        line: Optional[int] = None,
        field: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.path = path
        self.line = line
        self.field = field


class ProblemError(ContactbenchError, ValueError):
    """A contact problem (or a force vector) refused: size, finiteness, magnitude,
    symmetry, definiteness, sign (Rust ``problem::ProblemError``); ``field`` names it."""


class ProblemFileError(ContactbenchError):
    """A problem file that cannot be read or written (Rust ``problem::io::ProblemFileError``);
    ``path`` is the file, ``field`` the dataset or field when known."""


class ProblemFileExistsError(ProblemFileError, FileExistsError):
    """``write_problem`` without ``overwrite=True`` found a file at its path and left it
    as it was."""


class SolverError(ContactbenchError, ValueError):
    """An unknown solver, a bad setting or parameter, a warm start that does not fit
    (Rust ``solvers::SolverError``)."""


class ModelError(ContactbenchError):
    """A robot or URDF that cannot be loaded, an unknown frame, joint or configuration
    (Rust ``model::ModelError``)."""


class DynamicsError(ContactbenchError, ValueError):
    """A configuration or velocity of the wrong size or not finite (Rust
    ``dynamics::DynamicsError``)."""


class ScenarioError(ContactbenchError, ValueError):
    """A scenario file refused, with its file, line and field (Rust
    ``simulation::ScenarioError``)."""


class RecordError(ContactbenchError):
    """A run's record that cannot be written or read (Rust
    ``simulation::recorder::RecordError``)."""


class StepError(ContactbenchError, RuntimeError):
    """A simulation step that failed: dynamics, collision, the contact problem, the
    solver, or a state that is not finite (Rust ``simulation::StepError``)."""


class DerivativeError(ContactbenchError, ValueError):
    """No derivative where one was asked: a solve that did not converge, an answer that
    is not a solution, a contact whose conditions have none, a bad direction or setting
    (Rust ``derivatives::DerivativeError`` and ``simulation::StepDerivativeError``)."""


__all__ = [
    "ContactbenchError",
    "ProblemError",
    "ProblemFileError",
    "ProblemFileExistsError",
    "SolverError",
    "ModelError",
    "DynamicsError",
    "ScenarioError",
    "RecordError",
    "StepError",
    "DerivativeError",
]
