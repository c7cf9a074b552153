"""Terminal output (rich): tables sized to the terminal, report text shown with control characters escaped."""
