"""setuptools' build with one more step: the view's bundle rides in the package.

Streamlit serves the graph view's bundle from static/ beside app.py, which a wheel
does not carry; the build writes each static/*.js into stockdemo/ui/graph_view/ too,
so an installed stockdemo has the view's JavaScript with no repository beside it.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib, "stockdemo", "ui", "graph_view")
        for bundle in sorted(Path("static").glob("*.js")):
            self.mkpath(str(target))
            self.copy_file(str(bundle), str(target / bundle.name))


setup(cmdclass={"build_py": BuildPy})
