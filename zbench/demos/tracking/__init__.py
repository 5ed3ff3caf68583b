"""Multi-object tracking demo: a detector and an appearance embedding feeding Deep SORT."""
