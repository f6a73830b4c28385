"""setuptools' build with one more step: the view's bundle and the lessons ride in the package.

Streamlit serves the graph view's bundle from static/ beside app.py, which a wheel
does not carry; the build writes each static/*.js into stockdemo/ui/graph_view/ too,
so an installed stockdemo has the view's JavaScript with no repository beside it. The
shipped lessons (lessons/*.toml) go to stockdemo/lessons/files/ the same way
(stockdemo/lessons/files.py reads the repository's folder, else that one).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        package = Path(self.build_lib, "stockdemo")
        for folder, pattern, target in (("static", "*.js", package / "ui" / "graph_view"),
                                        ("lessons", "*.toml", package / "lessons" / "files")):
            for path in sorted(Path(folder).glob(pattern)):
                self.mkpath(str(target))
                self.copy_file(str(path), str(target / path.name))


setup(cmdclass={"build_py": BuildPy})
