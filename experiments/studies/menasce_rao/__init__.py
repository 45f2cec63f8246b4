"""Menascé & Rao (1996) reproduced: the validation Tables 2 and 3, live on the testbed."""
