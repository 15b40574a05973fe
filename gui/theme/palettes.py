"""The light and dark palettes Crossover stands in with where the platform cannot switch schemes itself."""
from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

R = QPalette.ColorRole

# Close to Fusion's own light palette, so a forced Light looks like the usual window.
_LIGHT = {R.Window: "#efefef", R.WindowText: "#000000", R.Base: "#ffffff", R.AlternateBase: "#f7f7f7",
          R.ToolTipBase: "#ffffdc", R.ToolTipText: "#000000", R.PlaceholderText: "#767676", R.Text: "#000000",
          R.Button: "#efefef", R.ButtonText: "#000000", R.BrightText: "#ffffff", R.Light: "#ffffff",
          R.Midlight: "#cacaca", R.Mid: "#b8b8b8", R.Dark: "#9f9f9f", R.Shadow: "#767676",
          R.Highlight: "#308cc6", R.HighlightedText: "#ffffff", R.Link: "#0b57d0", R.LinkVisited: "#7b1fa2"}
_LIGHT_DISABLED = {R.WindowText: "#9a9a9a", R.Text: "#9a9a9a", R.ButtonText: "#9a9a9a", R.Base: "#efefef",
                   R.Highlight: "#919191"}
# Text stays at about 12:1 on the window and the fields; disabled text still reads (about 4:1).
_DARK = {R.Window: "#2d2d30", R.WindowText: "#e6e6e6", R.Base: "#1e1f22", R.AlternateBase: "#27282b",
         R.ToolTipBase: "#3a3a3e", R.ToolTipText: "#f0f0f0", R.PlaceholderText: "#8c8c8c", R.Text: "#e6e6e6",
         R.Button: "#3a3a3e", R.ButtonText: "#e6e6e6", R.BrightText: "#ff6b6b", R.Light: "#505055",
         R.Midlight: "#444448", R.Mid: "#2a2a2d", R.Dark: "#1b1b1d", R.Shadow: "#000000",
         R.Highlight: "#2f6fd0", R.HighlightedText: "#ffffff", R.Link: "#6cb4ff", R.LinkVisited: "#c39cff"}
_DARK_DISABLED = {R.WindowText: "#8a8a8a", R.Text: "#8a8a8a", R.ButtonText: "#8a8a8a", R.Base: "#2a2a2d",
                  R.Highlight: "#4a4a4e", R.HighlightedText: "#b0b0b0"}


def explicit_palette(dark: bool) -> QPalette:
    """Every role set, so nothing of the platform's other scheme shows through."""
    palette = QPalette()
    for role, color in (_DARK if dark else _LIGHT).items():
        palette.setColor(role, QColor(color))
    for role, color in (_DARK_DISABLED if dark else _LIGHT_DISABLED).items():
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(color))
    return palette


def is_dark_palette(palette: QPalette) -> bool:
    """Whether this palette draws a dark window (whoever made it: the platform or Crossover)."""
    return palette.color(R.Window).lightness() < 128
