"""Entity memory: what an agent writes, resolves, supersedes, forgets and reads back.

The memory tools, the ``maxy memory`` commands and the Python API (:class:`Memory`) all call
these functions, so an agent, an operator and a script get the same behaviour.
"""
