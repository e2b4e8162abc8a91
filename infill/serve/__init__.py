"""``infill serve``: the local workbench (a web page) and its JSON API, one module per idea.

- :mod:`infill.serve.app`      the ASGI application: routes, JSON errors, the page's assets
- :mod:`infill.serve.schema`   the ``POST /api/fill`` body and the decode it asks for
- :mod:`infill.serve.worker`   the batching worker: one thread owns the models, one
                               ``fill_resolved`` per group of simultaneous requests
- :mod:`infill.serve.catalog`  which models a server offers; each loaded once, then cached
- :mod:`infill.serve.limits`   the configurable limits and the errors beyond them
- ``static/``                  the page: ``index.html``, ``app.js``, ``style.css`` (no CDN)

FastAPI and uvicorn come with the ``serve`` extra (``pip install 'infill-mlm[serve]'``).
"""
