"""ncuwrap: verdicts a kernel author can act on, from Nsight Compute and Nsight Systems data."""

__version__ = "0.1.0"
