"""The Why tab: the anatomy of a step measured on the chosen lanes and drawn as stacked bars."""
