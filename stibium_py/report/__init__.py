"""Views of a run: plotly figures, the self-contained HTML page, the terminal table."""
