"""The app's version, as the wheel's metadata and a remote lane's handshake state it."""

APP_VERSION = "0.1.0"
