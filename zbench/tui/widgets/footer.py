"""Textual's Footer, showing the same keys with less work (most of it before the first frame)."""

from __future__ import annotations

from collections.abc import Hashable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey


class Footer(TextualFooter):
    """Textual's Footer recomposes (removes and mounts all its keys) after every bindings change: a
    focus change, a screen resume; a screen's start brings several in one burst. Here:

    - a recompose already waiting absorbs the next changes (it reads the bindings when it runs);
    - a recompose is skipped when the keys it would show are the ones shown;
    - a key bound to the footer's ``compact`` starts with the footer's value (Textual starts it
      compact and then binds it, which restyles every key twice as it mounts).
    """

    _recompose_waiting = False
    _shown: Hashable = None

    def _keys(self) -> Hashable:
        """What compose reads: the shown bindings, the palette's, and the footer's options."""
        active = self.screen.active_bindings
        shown = tuple((b.binding, b.enabled, b.tooltip) for b in active.values() if b.binding.show)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        palette_key = None if palette is None else (palette.binding, palette.enabled)
        options = (self.compact, self.show_command_palette, self.app.ENABLE_COMMAND_PALETTE)
        return shown, palette_key, options

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._shown = self._keys()
        for widget in super().compose():
            if isinstance(widget, FooterKey) and "compact" in (widget._reactive_connect or ()):
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if self._recompose_waiting or not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self._recompose_waiting = self.call_after_refresh(self._recompose)

    async def _recompose(self) -> None:
        self._recompose_waiting = False
        if self._keys() != self._shown:
            await self.recompose()
