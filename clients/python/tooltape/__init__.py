"""tooltape is a command-line program (`tooltape` on the PATH once the wheel is installed); this
package only tells where its Python driver helper is. Drivers import the helper itself:
`import tooltape_driver` (clients/python/tooltape_driver.py, installed beside this package).
The wheel's layout needs this folder: maturin installs the files of `python-source`
(clients/python) only beside a package named after the project."""

import os

__all__ = ["driver_helper"]


def driver_helper():
    """The path of the installed `tooltape_driver` module."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tooltape_driver.py")
