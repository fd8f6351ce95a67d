//! Small builders from [`StringList`]s and scalars to Arrow arrays, with offsets checked (a
//! `string` column holds at most 2 GiB per row group).

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Int64Array, ListArray, StringArray, StructArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field, Fields};

use crate::error::ProductsError;
use crate::string_list::StringList;

fn offset(value: usize, column: &str) -> Result<i32, ProductsError> {
    i32::try_from(value).map_err(|_| ProductsError::Arrow {
        column: column.to_owned(),
        source: ArrowError::InvalidArgumentError(
            "more than 2 GiB of text in one row group".to_owned(),
        ),
    })
}

fn arrow_error(column: &str) -> impl Fn(ArrowError) -> ProductsError + '_ {
    move |source| ProductsError::Arrow {
        column: column.to_owned(),
        source,
    }
}

/// A non-null `string` array with one value per item.
pub fn strings<'a>(
    values: impl Iterator<Item = &'a str> + Clone,
    column: &str,
) -> Result<ArrayRef, ProductsError> {
    // Sized exactly up front: row groups hold tens of megabytes, and growing by doubling would
    // copy them several times.
    let (count, total) = values.clone().fold((0, 0), |(count, total), value| {
        (count + 1, total + value.len())
    });
    let mut bytes = Vec::with_capacity(total);
    let mut offsets = Vec::with_capacity(count + 1);
    offsets.push(0i32);
    for value in values {
        bytes.extend_from_slice(value.as_bytes());
        offsets.push(offset(bytes.len(), column)?);
    }
    let array = StringArray::try_new(
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        Buffer::from_vec(bytes),
        None,
    )
    .map_err(arrow_error(column))?;
    Ok(Arc::new(array))
}

/// All strings of several lists concatenated, as one flat `string` array, plus the list offsets.
fn flatten<'a>(
    lists: impl Iterator<Item = &'a StringList> + Clone,
    column: &str,
) -> Result<(StringArray, OffsetBuffer<i32>), ProductsError> {
    let (rows, values, total) = lists
        .clone()
        .fold((0, 0, 0), |(rows, values, total), list| {
            (rows + 1, values + list.len(), total + list.byte_len())
        });
    let mut bytes = Vec::with_capacity(total);
    let mut value_offsets = Vec::with_capacity(values + 1);
    value_offsets.push(0i32);
    let mut list_offsets = Vec::with_capacity(rows + 1);
    list_offsets.push(0i32);
    for list in lists {
        let base = bytes.len();
        bytes.extend_from_slice(list.bytes());
        for &end in list.ends() {
            value_offsets.push(offset(base + end, column)?);
        }
        list_offsets.push(offset(value_offsets.len() - 1, column)?);
    }
    let values = StringArray::try_new(
        OffsetBuffer::new(ScalarBuffer::from(value_offsets)),
        Buffer::from_vec(bytes),
        None,
    )
    .map_err(arrow_error(column))?;
    Ok((values, OffsetBuffer::new(ScalarBuffer::from(list_offsets))))
}

/// The item field of a non-null `list<string>`.
pub fn string_item() -> Arc<Field> {
    Arc::new(Field::new_list_field(DataType::Utf8, false))
}

/// A `list<string>` column, one list per row.
pub fn string_lists<'a>(
    lists: impl Iterator<Item = &'a StringList> + Clone,
    column: &str,
) -> Result<ArrayRef, ProductsError> {
    let (values, offsets) = flatten(lists, column)?;
    let array = ListArray::try_new(string_item(), offsets, Arc::new(values), None)
        .map_err(arrow_error(column))?;
    Ok(Arc::new(array))
}

/// The fields of a chat message struct.
pub fn message_fields() -> Fields {
    Fields::from(vec![
        Field::new("role", DataType::Utf8, false),
        Field::new("content", DataType::Utf8, false),
    ])
}

/// The type of the `prompt` column: `list<struct<role, content>>`.
pub fn prompt_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(
        DataType::Struct(message_fields()),
        false,
    )))
}

/// The `prompt` column from per-item roles and contents (taken, not copied, from a single item).
pub fn prompts<T>(
    items: &mut [T],
    roles: impl Fn(&mut T) -> &mut StringList,
    contents: impl Fn(&mut T) -> &mut StringList,
) -> Result<ArrayRef, ProductsError> {
    let (roles, offsets) = flatten_taking(items, roles, "prompt.role")?;
    let (contents, _) = flatten_taking(items, contents, "prompt.content")?;
    let structs = StructArray::try_new(
        message_fields(),
        vec![Arc::new(roles), Arc::new(contents)],
        None,
    )
    .map_err(arrow_error("prompt"))?;
    let item = Arc::new(Field::new_list_field(
        DataType::Struct(message_fields()),
        false,
    ));
    let array = ListArray::try_new(item, offsets, Arc::new(structs), None)
        .map_err(arrow_error("prompt"))?;
    Ok(Arc::new(array))
}

/// A non-null `string` column of one string field per item. From a single item the string's
/// buffer becomes the array's (no copy; the field is left empty); from several they are copied.
/// The bytes must be UTF-8; that is checked once, here.
pub fn strings_taking<T>(
    items: &mut [T],
    field: impl Fn(&mut T) -> &mut Vec<u8>,
    column: &str,
) -> Result<ArrayRef, ProductsError> {
    let (offsets, bytes) = if let [item] = items {
        let text = std::mem::take(field(item));
        (vec![0, offset(text.len(), column)?], text)
    } else {
        let total = items.iter_mut().map(|item| field(item).len()).sum();
        let mut bytes = Vec::with_capacity(total);
        let mut offsets = Vec::with_capacity(items.len() + 1);
        offsets.push(0i32);
        for item in items.iter_mut() {
            bytes.extend_from_slice(field(item));
            offsets.push(offset(bytes.len(), column)?);
        }
        (offsets, bytes)
    };
    let array = StringArray::try_new(
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        Buffer::from_vec(bytes),
        None,
    )
    .map_err(arrow_error(column))?;
    Ok(Arc::new(array))
}

/// A `list<string>` column of one list field per item, taken as [`strings_taking`] takes.
pub fn string_lists_taking<T>(
    items: &mut [T],
    field: impl Fn(&mut T) -> &mut StringList,
    column: &str,
) -> Result<ArrayRef, ProductsError> {
    let (values, offsets) = flatten_taking(items, field, column)?;
    let array = ListArray::try_new(string_item(), offsets, Arc::new(values), None)
        .map_err(arrow_error(column))?;
    Ok(Arc::new(array))
}

/// [`flatten`], taking the buffers of a single item's list instead of copying them.
fn flatten_taking<T>(
    items: &mut [T],
    field: impl Fn(&mut T) -> &mut StringList,
    column: &str,
) -> Result<(StringArray, OffsetBuffer<i32>), ProductsError> {
    if let [item] = items {
        let (bytes, ends) = std::mem::take(field(item)).into_parts();
        let mut value_offsets = Vec::with_capacity(ends.len() + 1);
        value_offsets.push(0i32);
        for end in ends {
            value_offsets.push(offset(end, column)?);
        }
        let count = offset(value_offsets.len() - 1, column)?;
        let values = StringArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(value_offsets)),
            Buffer::from_vec(bytes),
            None,
        )
        .map_err(arrow_error(column))?;
        return Ok((
            values,
            OffsetBuffer::new(ScalarBuffer::from(vec![0, count])),
        ));
    }
    let lists: Vec<&StringList> = items
        .iter_mut()
        .map(|item| -> &StringList { field(item) })
        .collect();
    flatten(lists.iter().copied(), column)
}

/// A non-null `bool` column.
pub fn booleans(values: impl Iterator<Item = bool>) -> ArrayRef {
    Arc::new(BooleanArray::from(values.collect::<Vec<_>>()))
}

/// A non-null `int64` column.
pub fn integers(values: impl Iterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from(values.collect::<Vec<_>>()))
}

/// A non-null struct column from named children.
pub fn structure(
    fields: Fields,
    children: Vec<ArrayRef>,
    column: &str,
) -> Result<ArrayRef, ProductsError> {
    Ok(Arc::new(
        StructArray::try_new(fields, children, None).map_err(arrow_error(column))?,
    ))
}
