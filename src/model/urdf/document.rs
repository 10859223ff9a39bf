//! A URDF document read from the flat view of its XML elements ([`xml::elements`]): the
//! links and joints the model is built from, each with its line, every number checked
//! (finite, the right count, in range) and every name unique. One pass over the elements,
//! so reading takes time and memory linear in the file.
//!
//! What is read, as urdfdom reads it: `<robot name version>`; per link its `<inertial>`
//! (`<origin>`, `<mass value>`, `<inertia ixx … izz>`) and its `<collision>`s (`<origin>`,
//! `<geometry>` with one `<box size>`, `<sphere radius>`, `<cylinder radius length>`,
//! `<capsule radius length>` or `<mesh filename scale>`); per joint its `type`,
//! `<origin xyz rpy>` (or `quat_xyzw` from URDF 1.1), `<parent link>`, `<child link>`,
//! `<axis xyz>` (default `1 0 0`) and `<limit lower upper effort velocity>`. Before URDF
//! 1.2 a `<limit>` needs `velocity` and a missing bound is 0; from 1.2 a missing bound is
//! unbounded. `<visual>`s are checked as collisions are, then dropped; every other element
//! (`<gazebo>`, `<transmission>`, `<material>`, `<dynamics>` …) is ignored.

use std::collections::HashMap;
use std::path::Path;

use nalgebra::{Isometry3, Matrix3, Quaternion, Translation3, UnitQuaternion, Vector3};

use super::super::{xml, ModelError};

/// Smallest and largest geometry dimension (m) and mesh scale factor accepted, as the
/// scenario's bodies: a zero or a 1e300 size is a typing error, not a robot.
pub const GEOMETRY_RANGE: (f64, f64) = (1e-6, 1e3);

/// Largest coordinate of an `<origin xyz>` (m), as the scenario's positions.
pub const MAX_ORIGIN: f64 = 1e6;

/// The `<inertia>` attributes, in the order of [`inertia_matrix`].
const INERTIA_ATTRIBUTES: [&str; 6] = ["ixx", "ixy", "ixz", "iyy", "iyz", "izz"];

/// A robot: its name, links and joints in document order.
#[derive(Debug)]
pub struct Document {
    pub name: String,
    pub links: Vec<Link>,
    pub joints: Vec<Joint>,
}

#[derive(Debug)]
pub struct Link {
    pub name: String,
    pub inertial: Inertial,
    pub collisions: Vec<Collision>,
}

/// A link's mass, centre-of-mass frame and rotational inertia in that frame (all zero
/// for a link without `<inertial>`).
#[derive(Debug)]
pub struct Inertial {
    pub origin: Isometry3<f64>,
    pub mass: f64,
    pub inertia: Matrix3<f64>,
}

#[derive(Debug)]
pub struct Collision {
    pub origin: Isometry3<f64>,
    pub geometry: Geometry,
    /// Line of the `<mesh>` or other shape element.
    pub line: usize,
}

#[derive(Debug)]
pub enum Geometry {
    Box {
        size: Vector3<f64>,
    },
    Sphere {
        radius: f64,
    },
    Cylinder {
        radius: f64,
        length: f64,
    },
    Capsule {
        radius: f64,
        length: f64,
    },
    Mesh {
        filename: String,
        scale: Vector3<f64>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointType {
    Revolute,
    Continuous,
    Prismatic,
    Fixed,
}

#[derive(Debug)]
pub struct Joint {
    pub name: String,
    pub kind: JointType,
    pub origin: Isometry3<f64>,
    pub parent: String,
    pub child: String,
    pub axis: Vector3<f64>,
    pub limit: Limit,
}

/// Position bounds (rad or m), effort (N·m or N) and velocity (rad/s or m/s) bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub lower: f64,
    pub upper: f64,
    pub effort: f64,
    pub velocity: f64,
}

/// A URDF version (`major.minor`; a missing or malformed one is 1.0, as urdfdom reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Version(u32, u32);

impl Version {
    fn of(robot: &xml::Element) -> Self {
        robot
            .attribute("version")
            .and_then(|v| {
                let (major, minor) = v.trim().split_once('.')?;
                Some(Self(major.parse().ok()?, minor.parse().ok()?))
            })
            .unwrap_or(Self(1, 0))
    }
}

/// One element and its descendants (document order).
#[derive(Clone, Copy)]
struct Node<'a> {
    element: &'a xml::Element,
    below: &'a [xml::Element],
}

impl<'a> Node<'a> {
    /// The children, each with its own descendants.
    fn children(self) -> impl Iterator<Item = Node<'a>> {
        let depth = self.element.depth + 1;
        let below = self.below;
        let starts = below
            .iter()
            .enumerate()
            .filter(move |(_, e)| e.depth == depth)
            .map(|(k, _)| k);
        starts.map(move |k| {
            let end = below[k + 1..]
                .iter()
                .position(|e| e.depth <= depth)
                .map_or(below.len(), |n| k + 1 + n);
            Node {
                element: &below[k],
                below: &below[k + 1..end],
            }
        })
    }

    fn children_named(self, name: &'static str) -> impl Iterator<Item = Node<'a>> {
        self.children().filter(move |c| c.element.name == name)
    }

    fn line(self) -> usize {
        self.element.line
    }

    fn name(&self) -> &'a str {
        &self.element.name
    }
}

/// Reads the document of a URDF file (`file` names it in errors).
pub fn read(elements: &[xml::Element], file: &Path) -> Result<Document, ModelError> {
    let malformed = |message: String| ModelError::MalformedUrdf {
        file: file.to_path_buf(),
        message,
    };
    let Some((root, rest)) = elements.split_first() else {
        return Err(malformed("no XML element".into()));
    };
    if root.name != "robot" {
        return Err(malformed(format!(
            "root element is <{}>, expected <robot>",
            root.name
        )));
    }
    if let Some(second) = rest.iter().find(|e| e.depth == 0) {
        return Err(malformed(format!(
            "line {}: a second root element <{}> after <robot>",
            second.line, second.name
        )));
    }
    let reader = Reader {
        file,
        version: Version::of(root),
    };
    let robot = Node {
        element: root,
        below: rest,
    };
    let mut links = Vec::new();
    let mut joints = Vec::new();
    let (mut link_lines, mut joint_lines) = (HashMap::new(), HashMap::new());
    for node in robot.children() {
        match node.name() {
            "link" => {
                let name = reader.name_of(node)?;
                reader.unique("link", name, node.line(), &mut link_lines)?;
                links.push(reader.link(node, name)?);
            }
            "joint" => {
                let name = reader.name_of(node)?;
                reader.unique("joint", name, node.line(), &mut joint_lines)?;
                joints.push(reader.joint(node, name)?);
            }
            _ => {}
        }
    }
    Ok(Document {
        name: root.attribute("name").unwrap_or_default().to_string(),
        links,
        joints,
    })
}

/// Reads the elements of one file, naming it in errors.
struct Reader<'a> {
    file: &'a Path,
    version: Version,
}

impl Reader<'_> {
    /// An error about `owner` (`link 'thigh'`) at `line`.
    fn invalid(&self, owner: &str, line: usize, message: String) -> ModelError {
        ModelError::InvalidElement {
            file: self.file.to_path_buf(),
            element: owner.to_string(),
            message: format!("line {line}: {message}"),
        }
    }

    /// Records `name`'s line; an error if an element of the same kind already has it.
    fn unique<'n>(
        &self,
        kind: &str,
        name: &'n str,
        line: usize,
        seen: &mut HashMap<&'n str, usize>,
    ) -> Result<(), ModelError> {
        match seen.insert(name, line) {
            None => Ok(()),
            Some(first) => Err(self.invalid(
                &format!("{kind} '{name}'"),
                line,
                format!("a second {kind} named '{name}' (the first is at line {first})"),
            )),
        }
    }

    /// The `name` attribute of a link or joint.
    fn name_of<'a>(&self, node: Node<'a>) -> Result<&'a str, ModelError> {
        node.element.attribute("name").ok_or_else(|| {
            self.invalid(
                &format!("<{}>", node.name()),
                node.line(),
                format!("<{}> without its name attribute", node.name()),
            )
        })
    }

    /// The one child `name` of `node`, if any; an error if there are several.
    fn at_most_one<'a>(
        &self,
        owner: &str,
        node: Node<'a>,
        name: &'static str,
    ) -> Result<Option<Node<'a>>, ModelError> {
        let mut found = node.children_named(name);
        let first = found.next();
        if let (Some(first), Some(second)) = (first, found.next()) {
            return Err(self.invalid(
                owner,
                second.line(),
                format!(
                    "a second <{name}> in <{}> (the first is at line {})",
                    node.name(),
                    first.line()
                ),
            ));
        }
        Ok(first)
    }

    /// The one child `name` of `node`; an error if it is missing or repeated.
    fn exactly_one<'a>(
        &self,
        owner: &str,
        node: Node<'a>,
        name: &'static str,
        missing: &str,
    ) -> Result<Node<'a>, ModelError> {
        self.at_most_one(owner, node, name)?
            .ok_or_else(|| self.invalid(owner, node.line(), missing.to_string()))
    }

    fn link(&self, node: Node<'_>, name: &str) -> Result<Link, ModelError> {
        let owner = format!("link '{name}'");
        let inertial = match self.at_most_one(&owner, node, "inertial")? {
            Some(inertial) => self.inertial(&owner, inertial)?,
            None => Inertial {
                origin: Isometry3::identity(),
                mass: 0.0,
                inertia: Matrix3::zeros(),
            },
        };
        for visual in node.children_named("visual") {
            self.collision(&owner, visual)?;
        }
        let collisions = node
            .children_named("collision")
            .map(|c| self.collision(&owner, c))
            .collect::<Result<_, _>>()?;
        Ok(Link {
            name: name.to_string(),
            inertial,
            collisions,
        })
    }

    fn inertial(&self, owner: &str, node: Node<'_>) -> Result<Inertial, ModelError> {
        let origin = self.origin(owner, node)?;
        let mass = self.exactly_one(owner, node, "mass", "<inertial> without <mass value=...>")?;
        let Some(Ok(mass_value)) = mass
            .element
            .attribute("value")
            .map(|v| v.trim().parse::<f64>())
            .filter(|v| v.as_ref().is_ok_and(|x| x.is_finite()))
        else {
            return Err(self.invalid(
                owner,
                mass.line(),
                format!(
                    "<mass value=\"{}\">: not a finite number",
                    mass.element.attribute("value").unwrap_or("")
                ),
            ));
        };
        let inertia = self.exactly_one(
            owner,
            node,
            "inertia",
            "<inertial> without <inertia ixx ixy ixz iyy iyz izz>",
        )?;
        let mut moments = [0.0; 6];
        for (value, key) in moments.iter_mut().zip(INERTIA_ATTRIBUTES) {
            *value = inertia
                .element
                .attribute(key)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    self.invalid(
                        owner,
                        inertia.line(),
                        format!("<inertia>: attribute {key} is missing or not a finite number"),
                    )
                })?;
        }
        Ok(Inertial {
            origin,
            mass: mass_value,
            inertia: inertia_matrix(moments),
        })
    }

    fn collision(&self, owner: &str, node: Node<'_>) -> Result<Collision, ModelError> {
        let origin = self.origin(owner, node)?;
        let what = format!("<{}> without <geometry>", node.name());
        let geometry = self.exactly_one(owner, node, "geometry", &what)?;
        let mut shapes = geometry.children();
        let Some(shape) = shapes.next() else {
            return Err(self.invalid(
                owner,
                geometry.line(),
                "<geometry> without a shape (box, sphere, cylinder, capsule or mesh)".into(),
            ));
        };
        if let Some(second) = shapes.next() {
            return Err(self.invalid(
                owner,
                second.line(),
                format!("a second shape <{}> in <geometry>", second.name()),
            ));
        }
        Ok(Collision {
            origin,
            geometry: self.geometry(owner, shape)?,
            line: shape.line(),
        })
    }

    fn geometry(&self, owner: &str, node: Node<'_>) -> Result<Geometry, ModelError> {
        let e = node.element;
        let size = |key: &str, count: usize| -> Result<Vec<f64>, ModelError> {
            let values = self.numbers(owner, e, key, count)?.ok_or_else(|| {
                self.invalid(
                    owner,
                    e.line,
                    format!("<{}> without its {key} attribute", e.name),
                )
            })?;
            self.in_geometry_range(owner, e, key, &values)?;
            Ok(values)
        };
        Ok(match e.name.as_str() {
            "box" => Geometry::Box {
                size: Vector3::from_column_slice(&size("size", 3)?),
            },
            "sphere" => Geometry::Sphere {
                radius: size("radius", 1)?[0],
            },
            "cylinder" => Geometry::Cylinder {
                radius: size("radius", 1)?[0],
                length: size("length", 1)?[0],
            },
            "capsule" => Geometry::Capsule {
                radius: size("radius", 1)?[0],
                length: size("length", 1)?[0],
            },
            "mesh" => {
                let filename = e.attribute("filename").ok_or_else(|| {
                    self.invalid(
                        owner,
                        e.line,
                        "<mesh> without its filename attribute".into(),
                    )
                })?;
                let scale = self.numbers(owner, e, "scale", 3)?;
                if let Some(scale) = &scale {
                    self.in_geometry_range(owner, e, "scale", scale)?;
                }
                Geometry::Mesh {
                    filename: filename.to_string(),
                    scale: scale.map_or(Vector3::repeat(1.0), |s| Vector3::from_column_slice(&s)),
                }
            }
            other => {
                return Err(self.invalid(
                    owner,
                    e.line,
                    format!("<{other}>: not a shape (box, sphere, cylinder, capsule or mesh)"),
                ))
            }
        })
    }

    /// Every value (its magnitude for a mesh's scale) within [`GEOMETRY_RANGE`]; the
    /// first that is not is named as written.
    fn in_geometry_range(
        &self,
        owner: &str,
        e: &xml::Element,
        key: &str,
        values: &[f64],
    ) -> Result<(), ModelError> {
        let (low, high) = GEOMETRY_RANGE;
        let magnitude = |v: f64| if key == "scale" { v.abs() } else { v };
        let Some(k) = values
            .iter()
            .position(|v| !(low..=high).contains(&magnitude(*v)))
        else {
            return Ok(());
        };
        let text = e.attribute(key).unwrap_or("");
        let value = text.split_whitespace().nth(k).unwrap_or("");
        let what = if key == "scale" { "in magnitude " } else { "" };
        Err(self.invalid(
            owner,
            e.line,
            format!(
                "<{} {key}=\"{text}\">: {value} is {what}outside [{low:e}, {high:e}] (m)",
                e.name
            ),
        ))
    }

    fn joint(&self, node: Node<'_>, name: &str) -> Result<Joint, ModelError> {
        let owner = format!("joint '{name}'");
        let kind_text = node.element.attribute("type").unwrap_or("<missing>");
        let kind = match kind_text {
            "revolute" => JointType::Revolute,
            "continuous" => JointType::Continuous,
            "prismatic" => JointType::Prismatic,
            "fixed" => JointType::Fixed,
            other => {
                return Err(ModelError::UnsupportedJointType {
                    file: self.file.to_path_buf(),
                    joint: name.to_string(),
                    kind: other.to_string(),
                })
            }
        };
        let link_of = |part: &'static str| -> Result<String, ModelError> {
            let missing = format!("no <{part} link=...>");
            let element = self.exactly_one(&owner, node, part, &missing)?;
            element
                .element
                .attribute("link")
                .map(str::to_string)
                .ok_or_else(|| self.invalid(&owner, element.line(), missing))
        };
        let (parent, child) = (link_of("parent")?, link_of("child")?);
        let axis = match self.at_most_one(&owner, node, "axis")? {
            Some(axis) => {
                let xyz = self
                    .numbers(&owner, axis.element, "xyz", 3)?
                    .ok_or_else(|| {
                        self.invalid(
                            &owner,
                            axis.line(),
                            "<axis> without its xyz attribute".into(),
                        )
                    })?;
                Vector3::from_column_slice(&xyz)
            }
            None => Vector3::x(),
        };
        let limit = match self.at_most_one(&owner, node, "limit")? {
            Some(limit) => self.limit(&owner, limit.element)?,
            None => Limit {
                lower: 0.0,
                upper: 0.0,
                effort: 0.0,
                velocity: 0.0,
            },
        };
        Ok(Joint {
            name: name.to_string(),
            kind,
            origin: self.origin(&owner, node)?,
            parent,
            child,
            axis,
            limit,
        })
    }

    /// A `<limit>`: bounds with `lower ≤ upper`, non-negative effort and velocity. Before
    /// URDF 1.2 `velocity` is required and a missing value is 0; from 1.2 a missing value
    /// is unbounded.
    fn limit(&self, owner: &str, e: &xml::Element) -> Result<Limit, ModelError> {
        let modern = self.version >= Version(1, 2);
        let value = |key: &str, unbounded: f64| -> Result<f64, ModelError> {
            match self.numbers(owner, e, key, 1)? {
                Some(v) => Ok(v[0]),
                None if modern => Ok(unbounded),
                None if key == "velocity" => Err(self.invalid(
                    owner,
                    e.line,
                    "<limit> without its velocity attribute".into(),
                )),
                None => Ok(0.0),
            }
        };
        let inf = f64::INFINITY;
        let limit = Limit {
            lower: value("lower", -inf)?,
            upper: value("upper", inf)?,
            effort: value("effort", inf)?,
            velocity: value("velocity", inf)?,
        };
        if limit.lower > limit.upper {
            return Err(self.invalid(
                owner,
                e.line,
                format!(
                    "<limit>: lower {} is above upper {}",
                    limit.lower, limit.upper
                ),
            ));
        }
        for (key, v) in [("effort", limit.effort), ("velocity", limit.velocity)] {
            if v < 0.0 {
                return Err(self.invalid(owner, e.line, format!("<limit>: {key} {v} is negative")));
            }
        }
        Ok(limit)
    }

    /// The `<origin>` child of `node` (identity when absent): `xyz`, and `rpy` or, from
    /// URDF 1.1, `quat_xyzw` (ignored before, as urdfdom does).
    fn origin(&self, owner: &str, node: Node<'_>) -> Result<Isometry3<f64>, ModelError> {
        let Some(origin) = self.at_most_one(owner, node, "origin")? else {
            return Ok(Isometry3::identity());
        };
        let e = origin.element;
        let xyz = self.numbers(owner, e, "xyz", 3)?.unwrap_or(vec![0.0; 3]);
        if let Some(x) = xyz.iter().find(|x| x.abs() > MAX_ORIGIN) {
            return Err(self.invalid(
                owner,
                e.line,
                format!(
                    "<origin xyz=\"{}\">: {x} m is beyond {MAX_ORIGIN:e} m",
                    e.attribute("xyz").unwrap_or("")
                ),
            ));
        }
        let rpy = self.numbers(owner, e, "rpy", 3)?;
        let quat = if self.version >= Version(1, 1) {
            self.numbers(owner, e, "quat_xyzw", 4)?
        } else {
            None
        };
        let rotation = match (rpy, quat) {
            (Some(_), Some(_)) => {
                return Err(self.invalid(
                    owner,
                    e.line,
                    "<origin> with both rpy and quat_xyzw: give one".into(),
                ))
            }
            (_, Some(q)) => unit_quaternion(&q),
            (Some(r), None) => UnitQuaternion::from_euler_angles(r[0], r[1], r[2]),
            (None, None) => UnitQuaternion::identity(),
        };
        Ok(Isometry3::from_parts(
            Translation3::from(Vector3::from_column_slice(&xyz)),
            rotation,
        ))
    }

    /// The attribute `key` of `e` as `count` finite numbers (None when absent).
    fn numbers(
        &self,
        owner: &str,
        e: &xml::Element,
        key: &str,
        count: usize,
    ) -> Result<Option<Vec<f64>>, ModelError> {
        let Some(text) = e.attribute(key) else {
            return Ok(None);
        };
        let values: Option<Vec<f64>> = text
            .split_whitespace()
            .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
            .collect();
        match values {
            Some(values) if values.len() == count => Ok(Some(values)),
            _ => Err(self.invalid(
                owner,
                e.line,
                format!(
                    "<{} {key}=\"{text}\">: expected {count} finite number(s)",
                    e.name
                ),
            )),
        }
    }
}

/// The symmetric inertia matrix of `[ixx, ixy, ixz, iyy, iyz, izz]`.
fn inertia_matrix([xx, xy, xz, yy, yz, zz]: [f64; 6]) -> Matrix3<f64> {
    Matrix3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz)
}

/// The rotation of a quaternion `[x, y, z, w]`, normalized (the identity for a zero one,
/// as urdfdom).
fn unit_quaternion(xyzw: &[f64]) -> UnitQuaternion<f64> {
    let q = Quaternion::new(xyzw[3], xyzw[0], xyzw[1], xyzw[2]);
    if q.norm() > 0.0 {
        UnitQuaternion::from_quaternion(q)
    } else {
        UnitQuaternion::identity()
    }
}
