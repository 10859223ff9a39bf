//! numpy arrays ↔ nalgebra, Python values ↔ JSON values (solver settings, specs).

use nalgebra::{DMatrix, DVector};
use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// A 1-D float vector from any array-like (a list, a numpy array of any numeric dtype);
/// `name` names the argument in errors.
pub fn vector(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<DVector<f64>> {
    let array = as_float_array(obj, name)?;
    let array = array
        .cast_into::<PyArray1<f64>>()
        .map_err(|_| PyValueError::new_err(format!("{name}: expected a 1-D array")))?;
    let readonly = array.readonly();
    let view = readonly.as_array();
    Ok(DVector::from_iterator(view.len(), view.iter().copied()))
}

/// A 2-D float matrix from any array-like; `name` names the argument in errors.
pub fn matrix(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<DMatrix<f64>> {
    let array = as_float_array(obj, name)?;
    let array = array
        .cast_into::<PyArray2<f64>>()
        .map_err(|_| PyValueError::new_err(format!("{name}: expected a 2-D array")))?;
    let readonly = array.readonly();
    let view = readonly.as_array();
    let (rows, cols) = view.dim();
    Ok(DMatrix::from_fn(rows, cols, |i, j| view[(i, j)]))
}

/// `numpy.asarray(obj, dtype=float64)`, naming the argument when it is not numeric or is
/// complex (numpy would drop the imaginary part with a mere warning).
fn as_float_array<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    let numpy = py.import("numpy")?;
    let complex: bool = numpy
        .call_method1("iscomplexobj", (obj,))
        .and_then(|c| c.extract())
        .unwrap_or(false);
    if complex {
        return Err(PyTypeError::new_err(format!(
            "{name}: expected real numbers, got a complex array (its imaginary part would be dropped)"
        )));
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", numpy.getattr("float64")?)?;
    numpy
        .call_method("asarray", (obj,), Some(&kwargs))
        .map_err(|e| PyTypeError::new_err(format!("{name}: expected an array of numbers ({e})")))
}

/// A vector as a new 1-D numpy array.
pub fn array1<'py>(py: Python<'py>, x: &DVector<f64>) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_slice(py, x.as_slice())
}

/// A slice as a new 1-D numpy array.
pub fn array1_slice<'py>(py: Python<'py>, x: &[f64]) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_slice(py, x)
}

/// A matrix as a new 2-D numpy array (row-major, as numpy's default).
pub fn array2<'py>(py: Python<'py>, m: &DMatrix<f64>) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (rows, cols) = m.shape();
    let flat: Vec<f64> = (0..rows)
        .flat_map(|i| (0..cols).map(move |j| (i, j)))
        .map(|(i, j)| m[(i, j)])
        .collect();
    PyArray1::from_vec(py, flat).reshape([rows, cols])
}

/// A Python value as JSON (None, bool, int, float, str, list/tuple, dict with str keys);
/// `key` names the setting in errors. A non-finite float is refused (JSON cannot hold
/// it).
pub fn to_value(obj: &Bound<'_, PyAny>, key: &str) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::Number(u.into()));
        }
    }
    if obj.is_instance_of::<PyFloat>() {
        return float_value(obj.extract::<f64>()?, key);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_string()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return Ok(Value::Object(to_map(d)?));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items = obj
            .try_iter()?
            .map(|item| to_value(&item?, key))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::Array(items));
    }
    // numpy scalars: integers through __index__, floats through __float__.
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Value::Number(i.into()));
    }
    if let Ok(x) = obj.extract::<f64>() {
        return float_value(x, key);
    }
    Err(PyTypeError::new_err(format!(
        "{key}: cannot use a value of type {} as a setting",
        obj.get_type().name()?
    )))
}

fn float_value(x: f64, key: &str) -> PyResult<Value> {
    Number::from_f64(x)
        .map(Value::Number)
        .ok_or_else(|| PyValueError::new_err(format!("{key}: {x} is not a finite number")))
}

/// A dict with string keys as a JSON map.
pub fn to_map(dict: &Bound<'_, PyDict>) -> PyResult<Map<String, Value>> {
    let mut map = Map::new();
    for (k, v) in dict.iter() {
        let key: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("setting names must be strings"))?;
        let value = to_value(&v, &key)?;
        map.insert(key, value);
    }
    Ok(map)
}

/// A JSON value as a Python object.
pub fn from_value<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(from_value(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => from_map(py, map)?.into_any(),
    })
}

/// A JSON map as a Python dict.
pub fn from_map<'py>(py: Python<'py>, map: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in map {
        dict.set_item(k, from_value(py, v)?)?;
    }
    Ok(dict)
}
