"""Markdown output: the short form for a pull-request comment (GitHub-flavoured, no HTML), every
report text escaped with ncuwrap.render.escape."""
