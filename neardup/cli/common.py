"""What every command shares: the one-line failure, the error reporting and the settings.

Every failure that neardup foresees exits non-zero with a one-line reason on stderr, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, NoReturn, TypeVar

import click
from elasticsearch import ApiError as ESApiError
from elasticsearch import ConnectionError as ESConnectionError
from elasticsearch import ConnectionTimeout

from neardup.config import Settings
from neardup.errors import EmbeddedESError, NeardupError
from neardup.es.client import refusal_reason

__all__ = ["fail", "reports_errors", "settings_from"]

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"neardup: {message}", err=True)
    sys.exit(code)


#: a command interrupted (Ctrl-C), as a shell reports SIGINT
EXIT_INTERRUPTED = 130


def reports_errors(func: F) -> F:
    """Turn neardup's own errors into a one-line message and a non-zero exit."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except KeyboardInterrupt:  # a command that can say more (where to resume) says it before this
            fail("interrupted", EXIT_INTERRUPTED)
        except EmbeddedESError as exc:
            if exc.log_tail:
                click.echo(exc.log_tail, err=True)
            fail(str(exc), exc.exit_code)
        except NeardupError as exc:
            fail(str(exc), exc.exit_code)
        except ValueError as exc:  # input refused below the command (a record's RecordError, JSON's JSONRefused)
            fail(str(exc), 2)
        except ConnectionTimeout:
            fail(
                "Elasticsearch did not answer in time (ConnectionTimeout): it may be busy; "
                "NEARDUP_ES_TIMEOUT sets how many seconds to wait (default 10)"
            )
        except ESConnectionError as exc:
            fail(
                f"Elasticsearch is unreachable ({type(exc).__name__}); "
                "start it (neardup es start) or set NEARDUP_ES_URL"
            )
        except ESApiError as exc:
            fail(f"Elasticsearch refused the request ({exc.meta.status}): {refusal_reason(exc)}")
        except OSError as exc:  # a folder or file of NEARDUP_HOME, --data or an input that cannot be made or read
            where = f" {exc.filename}" if exc.filename else ""
            fail(f"cannot use{where}: {exc.strerror or exc}")

    return wrapper  # type: ignore[return-value]


def settings_from(ctx: click.Context) -> Settings:
    settings: Settings = ctx.ensure_object(dict).setdefault("settings", Settings.from_env())
    return settings
