"""channels.testing.WebsocketCommunicator without daphne (channels.testing's __init__ imports it).

channels' testing package imports daphne only for ChannelsLiveServerTestCase, which we don't use.
Until daphne is in the dev lock, load the package's real submodules without running its __init__.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

try:
    from channels.testing import WebsocketCommunicator
except ModuleNotFoundError as exc:
    if exc.name != "daphne":
        raise
    import channels

    package = types.ModuleType("channels.testing")
    package.__path__ = [str(Path(channels.__file__).parent / "testing")]
    sys.modules["channels.testing"] = package
    from channels.testing.websocket import WebsocketCommunicator

__all__ = ["WebsocketCommunicator"]
