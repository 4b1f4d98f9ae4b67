"""The exception tawa raises for anything wrong with a kernel, its arguments or its launch."""


class TawaError(Exception):
    """A located diagnostic: ``file:line:col: error: message`` (plus a hint when one is known).

    Attributes: ``file``, ``line``, ``col`` (where in the kernel's source or the launch the error
    lies; ``file`` is "" when it has no location), ``message`` and ``hint``.
    """

    def __init__(self, text, file="", line=0, col=0, message=None, hint=""):
        super().__init__(text)
        self.file = file
        self.line = line
        self.col = col
        self.message = text if message is None else message
        self.hint = hint
