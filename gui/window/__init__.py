"""The main window: composing panels and tabs, actions and menus, starting and stopping, exports, recovery, About."""
