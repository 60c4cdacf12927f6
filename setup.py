"""The one build step pyproject.toml cannot say: ``messages/`` (catalogs, colours, fonts) goes into the wheel as
``moderator/messages``, so an installed moderator has its words and fonts without the repository beside it."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithMessages(build_py):
    """``build_py``, then ``messages/`` copied into the built package (not for an editable install: it reads the
    folder in place)."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            target = Path(self.build_lib) / "moderator" / "messages"
            shutil.copytree(Path(__file__).parent / "messages", target, dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildWithMessages})
