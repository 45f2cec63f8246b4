"""nowlab: experiments."""
