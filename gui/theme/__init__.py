"""Light and dark: the scheme chosen in View, its palettes, and the colour every lane keeps."""
