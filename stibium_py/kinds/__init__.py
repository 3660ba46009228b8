"""The kinds of test, one folder each: its plan model (model.py), its expansion into operations (expand.py), the
order the driver carries them out in (order.py), its summary, warnings and points (analysis.py) and its views
(view.py), handed to the layers as one KindSpec (its __init__.py's SPEC). The registry (stibium_py/registry.py)
imports a folder by name the first time a layer asks for a kind; nothing else imports these folders."""
