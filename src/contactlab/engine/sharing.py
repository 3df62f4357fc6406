"""Records handed through the compiled step without reference counts.

Numba gives every array it passes between compiled functions a reference count, which it raises
and lowers with atomic instructions around each call (on counters all threads share).  Across the
calls of one step that was most of a small scene's step (``benchmarks/README.md``, "Two bodies,
fixed").  The step kernels therefore receive their records (:mod:`contactlab.engine.step_records`) from
Python once per kernel call and :func:`share` them: the same record with every array, at any depth
of nested records, replaced by a view of the same memory without a memory-info pointer.  Such a
view costs nothing to pass on or drop (Numba's reference counting skips a null pointer) and stays
valid while the arrays it views live, i.e. for the duration of the kernel call that received them
(the caller, the :class:`~contactlab.engine.stepper.Stepper`, holds them).  Nothing may keep a
shared view beyond that call (return it, store it): the kernels return numbers only.

The shared record is also handed on *by reference*: :func:`share` stores it once in the kernel's
stack frame and returns a :class:`RecordRef`, one pointer, through which a compiled function reads
a field by name as it would from the record itself (``bodies.pos``; the field's value is loaded
when read).  A record passed by value is copied word by word into every call (an array is seven
to eleven words; the step's records are several hundred), which for a small scene is much of a
step; a reference is one word.  A loop reads the fields it uses into local names once, before
the loop (a value read through the reference may be loaded again after each store to an array:
the compiler cannot rule out that the store changed it).

In plain Python (the debug twin) :func:`share` returns its argument, and fields are read from the
record itself.
"""
from __future__ import annotations

from numba.core import cgutils, types
from numba.core.datamodel import models, register_default
from numba.core.imputils import impl_ret_borrowed
from numba.core.typing.templates import AttributeTemplate
from numba.extending import infer_getattr, intrinsic, lower_getattr_generic, overload

__all__ = ["share", "RecordRef"]


class RecordRef(types.Type):
    """Numba type of a reference to a record (a named tuple) in the stack frame of a kernel call."""

    def __init__(self, record):
        self.record = record
        super().__init__(name=f"RecordRef({record})")

    @property
    def key(self):
        return self.record


@register_default(RecordRef)
class _RecordRefModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, dmm.lookup(fe_type.record).get_data_type().as_pointer())


@infer_getattr
class _RecordRefAttributes(AttributeTemplate):
    key = RecordRef

    def generic_resolve(self, ref, attr):
        record = ref.record
        if attr in record.fields:
            return record.types[record.fields.index(attr)]
        return None


@lower_getattr_generic(RecordRef)
def _record_ref_field(context, builder, ty, ref, attr):
    q = ty.record.fields.index(attr)
    field = ty.record.types[q]
    load = builder.load(cgutils.gep_inbounds(builder, ref, 0, q))
    # the slot is written once, before any reference to it exists: every read of a field gives the
    # same value, which LLVM may then keep in a register across stores to arrays (without this it
    # must assume such a store may have changed the slot, and read the field again)
    load.set_metadata("invariant.load", builder.module.add_metadata([]))
    value = context.data_model_manager[field].from_data(builder, load)
    return impl_ret_borrowed(context, builder, field, value)


def _strip(context, builder, ty, value):
    """``value`` of Numba type ``ty`` with the memory-info pointer of each array in it set to null."""
    if isinstance(ty, types.Array):
        view = context.make_array(ty)(context, builder, value=value)
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        return view._getvalue()
    if isinstance(ty, types.BaseTuple):
        for q, member in enumerate(ty.types):
            value = builder.insert_value(value, _strip(context, builder, member, builder.extract_value(value, q)), q)
        return value
    return value


@intrinsic
def _share(typingctx, record):
    if not isinstance(record, types.BaseNamedTuple):
        return None

    def codegen(context, builder, signature, args):
        value = _strip(context, builder, record, args[0])
        data = context.data_model_manager[record].as_data(builder, value)
        slot = cgutils.alloca_once(builder, data.type)
        builder.store(data, slot)
        return slot

    return RecordRef(record)(record), codegen


def share(record):
    """A reference to ``record`` with its arrays viewed without reference counts (compiled code;
    see the module docstring), valid during the calling kernel's call; in plain Python ``record``
    itself."""
    return record


# inlined where it is called: the record's stack slot must be in the calling kernel's frame (an
# implementation compiled as a function of its own would return a pointer into its own, dead frame)
@overload(share, inline="always")
def _share_overload(record):
    return lambda record: _share(record)
