"""Shared numpydoc sections, inserted into class docstrings so they are written once."""


def fill_doc(**sections):
    """Class decorator: ``cls.__doc__.format(**sections)`` with each section stripped so it
    lines up with the placeholder's indentation."""
    def decorate(cls):
        cls.__doc__ = cls.__doc__.format(
            **{name: text.strip() + "\n" for name, text in sections.items()})
        return cls
    return decorate


def documents_score(text):
    """Class decorator: the ``<score>`` of ``cls.__doc__`` replaced by ``text`` (what the
    estimator's ``score`` computes), before :func:`fill_doc` formats the rest."""
    def decorate(cls):
        cls.__doc__ = cls.__doc__.replace("<score>", text)
        return cls
    return decorate
