"""Small widgets the window's panels and tabs are built of: labels, spin boxes, sliders, axes, dialogs, plot export."""
