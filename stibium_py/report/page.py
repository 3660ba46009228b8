"""One self-contained HTML page: plotly.js embedded once (compressed), every figure as a div,
every user-provided string escaped. Works offline."""

from __future__ import annotations

import base64
import functools
import gzip
import html
import importlib.util
import json
from pathlib import Path
from typing import Any

from . import plot

CSS = """
body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;
padding:16px 24px;color:#222}
h1{font-size:1.6em;margin-bottom:4px} h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;margin:8px 0;font-size:0.92em} td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}
th{background:#f5f5f5} .muted{color:#666;font-size:0.9em} .warn{background:#fff4e5;border-left:4px solid #f0a020;
padding:6px 10px;margin:6px 0} .info{background:#eef5ff;border-left:4px solid #4a90d9;padding:6px 10px;margin:6px 0}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:8px} @media(max-width:900px){.grid{grid-template-columns:1fr}}
"""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(fig: plot.Figure, div_id: str) -> str:
    """A figure's div and script (as plotly.py's to_html writes them). Its house template (plotly_white) is
    not written into every figure: the page carries it once and hands it to each figure as it is drawn
    (see _queue), which saves about 7 kB a figure."""
    layout = {"template": {}, **fig.layout}
    return (f'<div style="height:100%; width:100%;"><div id="{div_id}" class="plotly-graph-div" '
            f'style="height:100%; width:100%;"></div><script>window.PLOTLYENV=window.PLOTLYENV || {{}};'
            f'if (document.getElementById("{div_id}")) {{Plotly.newPlot("{div_id}", {plot.to_json(fig.data)}, '
            f'{plot.to_json(layout)}, {{"displaylogo": false, "responsive": true}})}};</script></div>')


def _plotly_data(name: str) -> Path:
    """A file of plotly's package data (plotly.js, the templates), found without importing plotly."""
    spec = importlib.util.find_spec("plotly")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "package_data" / name


# plotly.js (4.8 MB) is embedded gzip-compressed (2.3 MB as base64) and unpacked by the browser's own
# DecompressionStream (Chromium 80, Safari 16.4, Firefox 113 and later): every page is ~2.5 MB smaller and
# still works offline. Figures asked for before it is unpacked wait in a queue.
_QUEUE_JS = ("window.stibiumFigures=[];window.Plotly={newPlot:function(){var l=arguments[2]||{};"
             "if(!l.template||!Object.keys(l.template).length){l.template=window.stibiumTemplate;}arguments[2]=l;"
             "window.stibiumFigures.push(arguments);return Promise.resolve();}};")


@functools.lru_cache(maxsize=1)
def _queue() -> str:
    template = json.dumps(json.loads(_plotly_data("templates/plotly_white.json").read_text(encoding="utf-8")),
                          separators=(",", ":")).replace("</", "<\\/")
    return f"window.stibiumTemplate={template};{_QUEUE_JS}"


_UNPACK = """(async function(){
  var note=document.getElementById('stibium-js-note');
  try{
    var b64=document.getElementById('stibium-plotly-gz').textContent;
    var raw=atob(b64),bytes=new Uint8Array(raw.length);
    for(var i=0;i<raw.length;i++){bytes[i]=raw.charCodeAt(i);}
    var text=await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
    var s=document.createElement('script');s.text=text;document.head.appendChild(s);
    var P=window.Plotly;
    await Promise.all(window.stibiumFigures.map(function(a){return P.newPlot.apply(P,a);}));
    note.remove();document.body.setAttribute('data-figures-drawn',String(window.stibiumFigures.length));
    console.log('stibium: '+window.stibiumFigures.length+' figures drawn');
  }catch(e){note.textContent='The figures need a browser from 2023 or later (Chromium 80, Safari 16.4, '+
    'Firefox 113): '+e;}
})();"""


@functools.lru_cache(maxsize=1)
def _plotly_gz_b64() -> str:
    # level 1: every report and comparison compresses it once, and the lowest level costs the least time for a
    # page only a little larger (docs/performance.md)
    return base64.b64encode(gzip.compress(_plotly_data("plotly.min.js").read_bytes(), 1, mtime=0)).decode("ascii")


def page(title: str, sections: list[str]) -> str:
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>{CSS}</style>"
            f"<script>{_queue()}</script></head><body>"
            f"<p id=\"stibium-js-note\" class=\"muted\">Drawing the figures...</p>"
            + "\n".join(sections)
            + f"<script id=\"stibium-plotly-gz\" type=\"application/octet-stream\">{_plotly_gz_b64()}</script>"
            f"<script>{_UNPACK}</script></body></html>")
