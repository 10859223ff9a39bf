//! Building a [`Model`] from a URDF file, the way Pinocchio's URDF parser does: joints in
//! depth-first order, the child joints of a link sorted by name (urdfdom keeps joints in a
//! name-ordered map: the Allegro hand's thumb `joint_12.0` comes before `joint_4.0`), fixed joints merged into their parent body
//! (their frames kept), one `Body` frame per link, inertias and collision geometry expressed
//! in the frame of the moving joint that carries them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nalgebra::{Isometry3, Matrix3, Translation3, Unit, UnitQuaternion, Vector3};

use super::{
    xml, CollisionGeometry, Frame, FrameKind, GeometryShape, Inertia, JointKind, Model, ModelError,
    RootJoint,
};

/// Largest URDF file read (bytes): Talos's is 70 kB.
pub const MAX_URDF_BYTES: u64 = 64 << 20;

/// Attributes of a URDF `<inertia>` element.
const INERTIA_ATTRIBUTES: [&str; 6] = ["ixx", "ixy", "ixz", "iyy", "iyz", "izz"];

/// URDF joint types accepted by the parser.
const SUPPORTED_JOINT_TYPES: [&str; 4] = ["revolute", "continuous", "prismatic", "fixed"];

impl Model {
    /// Loads a URDF file. Mesh URIs (`package://pkg/rest`, `file://`, relative paths) are
    /// resolved against the URDF's ancestor directories and must exist.
    pub fn from_urdf(path: impl AsRef<Path>, root: RootJoint) -> Result<Model, ModelError> {
        Model::from_urdf_with_packages(path, root, &[])
    }

    /// Loads a URDF file; `package://pkg/rest` URIs are looked up first as `DIR/pkg/rest` for
    /// every `DIR` of `package_dirs`, then against the URDF's ancestor directories.
    pub fn from_urdf_with_packages(
        path: impl AsRef<Path>,
        root: RootJoint,
        package_dirs: &[PathBuf],
    ) -> Result<Model, ModelError> {
        let file = path.as_ref().to_path_buf();
        let text = super::read_text(&file, MAX_URDF_BYTES).map_err(|error| ModelError::Io {
            file: file.clone(),
            error,
        })?;
        check_xml(&text, &file)?;
        let robot = urdf_rs::read_from_string(&text).map_err(|e| ModelError::MalformedUrdf {
            file: file.clone(),
            message: e.to_string(),
        })?;
        let mut builder = UrdfBuilder {
            file: &file,
            robot: &robot,
            package_dirs,
        };
        builder.build(root)
    }
}

/// Checks what urdf-rs does not report clearly: malformed or truncated XML, and joint types
/// that the model does not support (named with their joint).
fn check_xml(text: &str, file: &Path) -> Result<(), ModelError> {
    let elements = xml::elements(text).map_err(|message| ModelError::MalformedUrdf {
        file: file.to_path_buf(),
        message,
    })?;
    if elements[0].name != "robot" {
        return Err(ModelError::MalformedUrdf {
            file: file.to_path_buf(),
            message: format!("root element is <{}>, expected <robot>", elements[0].name),
        });
    }
    check_links(&elements, file)?;
    for e in elements
        .iter()
        .filter(|e| e.depth == 1 && e.name == "joint")
    {
        let name = e.attribute("name").unwrap_or("<unnamed>");
        let kind = e.attribute("type").unwrap_or("<missing>");
        if !SUPPORTED_JOINT_TYPES.contains(&kind) {
            return Err(ModelError::UnsupportedJointType {
                file: file.to_path_buf(),
                joint: name.to_string(),
                kind: kind.to_string(),
            });
        }
    }
    Ok(())
}

/// The children (one level down) of the element at index `k`.
fn children(elements: &[xml::Element], k: usize) -> impl Iterator<Item = &xml::Element> {
    let depth = elements[k].depth;
    elements[k + 1..]
        .iter()
        .take_while(move |e| e.depth > depth)
        .filter(move |e| e.depth == depth + 1)
}

/// What urdf-rs requires of links and joints, checked first so that the error names the
/// link or joint and the line: an `<inertial>` has a `<mass value>` and an `<inertia>`
/// with its six numbers; a joint has a `<parent link>` and a `<child link>`.
fn check_links(elements: &[xml::Element], file: &Path) -> Result<(), ModelError> {
    let invalid = |element: String, line: usize, message: String| ModelError::InvalidElement {
        file: file.to_path_buf(),
        element,
        message: format!("line {line}: {message}"),
    };
    let number = |e: &xml::Element, key: &str| {
        e.attribute(key)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|x| x.is_finite())
    };
    for (k, e) in elements.iter().enumerate().filter(|(_, e)| e.depth == 1) {
        let name = e.attribute("name").unwrap_or("<unnamed>");
        match e.name.as_str() {
            "link" => {
                for (i, inertial) in elements.iter().enumerate().skip(k + 1) {
                    if inertial.depth <= 1 {
                        break;
                    }
                    if inertial.depth != 2 || inertial.name != "inertial" {
                        continue;
                    }
                    let link = format!("link '{name}'");
                    let mass = children(elements, i).find(|c| c.name == "mass");
                    match mass {
                        None => {
                            return Err(invalid(
                                link,
                                inertial.line,
                                "<inertial> without <mass value=...>".into(),
                            ))
                        }
                        Some(m) if number(m, "value").is_none() => {
                            return Err(invalid(
                                link,
                                m.line,
                                format!(
                                    "<mass value=\"{}\">: not a finite number",
                                    m.attribute("value").unwrap_or("")
                                ),
                            ))
                        }
                        Some(_) => {}
                    }
                    let Some(inertia) = children(elements, i).find(|c| c.name == "inertia") else {
                        return Err(invalid(
                            link,
                            inertial.line,
                            "<inertial> without <inertia ixx ixy ixz iyy iyz izz>".into(),
                        ));
                    };
                    if let Some(bad) = INERTIA_ATTRIBUTES
                        .iter()
                        .find(|a| number(inertia, a).is_none())
                    {
                        return Err(invalid(
                            link,
                            inertia.line,
                            format!("<inertia>: attribute {bad} is missing or not a finite number"),
                        ));
                    }
                }
            }
            "joint" => {
                for part in ["parent", "child"] {
                    if !children(elements, k)
                        .any(|c| c.name == part && c.attribute("link").is_some())
                    {
                        return Err(invalid(
                            format!("joint '{name}'"),
                            e.line,
                            format!("no <{part} link=...>"),
                        ));
                    }
                }
            }
            _ => {}
        }
        if matches!(e.name.as_str(), "link" | "joint") {
            let owner = format!("{} '{name}'", e.name);
            for d in elements[k + 1..].iter().take_while(|d| d.depth > 1) {
                check_attributes(d).map_err(|m| invalid(owner.clone(), d.line, m))?;
            }
        }
    }
    Ok(())
}

/// The attributes urdf-rs reads as numbers (or requires) on the elements inside a link or
/// a joint: `<origin xyz rpy>`, `<axis xyz>`, the geometries, `<limit>`.
fn check_attributes(e: &xml::Element) -> Result<(), String> {
    let numbers = |key: &str, count: usize, required: bool| -> Result<(), String> {
        let Some(text) = e.attribute(key) else {
            return if required {
                Err(format!("<{}> without its {key} attribute", e.name))
            } else {
                Ok(())
            };
        };
        let values: Vec<Option<f64>> = text
            .split_whitespace()
            .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
            .collect();
        if values.len() != count || values.iter().any(Option::is_none) {
            return Err(format!(
                "<{} {key}=\"{text}\">: expected {count} finite number(s)",
                e.name
            ));
        }
        Ok(())
    };
    match e.name.as_str() {
        "origin" => {
            numbers("xyz", 3, false)?;
            numbers("rpy", 3, false)
        }
        "axis" => numbers("xyz", 3, true),
        "box" => numbers("size", 3, true),
        "sphere" => numbers("radius", 1, true),
        "cylinder" | "capsule" => {
            numbers("radius", 1, true)?;
            numbers("length", 1, true)
        }
        "mesh" => {
            if e.attribute("filename").is_none() {
                return Err("<mesh> without its filename attribute".into());
            }
            numbers("scale", 3, false)
        }
        "limit" => {
            for key in ["lower", "upper", "effort"] {
                numbers(key, 1, false)?;
            }
            numbers("velocity", 1, true)
        }
        _ => Ok(()),
    }
}

struct UrdfBuilder<'a> {
    file: &'a Path,
    robot: &'a urdf_rs::Robot,
    package_dirs: &'a [PathBuf],
}

/// A link waiting to be visited: the joint through which it is reached (None for the root),
/// the moving joint that carries it, and its placement in that joint's frame.
struct Visit {
    via: Option<usize>,
    link: usize,
    parent_joint: usize,
    placement: Isometry3<f64>,
}

impl UrdfBuilder<'_> {
    fn build(&mut self, root: RootJoint) -> Result<Model, ModelError> {
        let links = &self.robot.links;
        let mut index = HashMap::new();
        for (k, link) in links.iter().enumerate() {
            if index.insert(link.name.as_str(), k).is_some() {
                return Err(self.not_a_tree(format!("link '{}' is defined twice", link.name)));
            }
        }
        let (children, root_link) = self.tree(&index)?;
        let mut model = Model::empty(&self.robot.name);
        let mut stack = vec![Visit {
            via: None,
            link: root_link,
            parent_joint: 0,
            placement: Isometry3::identity(),
        }];
        if root == RootJoint::FreeFlyer {
            let inf = f64::INFINITY;
            let j = model.add_joint(
                "root_joint",
                JointKind::FreeFlyer,
                0,
                Isometry3::identity(),
                [
                    &[-inf, -inf, -inf, -1.0, -1.0, -1.0, -1.0],
                    &[inf, inf, inf, 1.0, 1.0, 1.0, 1.0],
                    &[inf; 6],
                    &[inf; 6],
                ],
            );
            model.frames.push(joint_frame("root_joint", j));
            stack[0].parent_joint = j;
        }
        let mut visited = 0usize;
        while let Some(visit) = stack.pop() {
            visited += 1;
            let (parent_joint, placement) = match visit.via {
                None => (visit.parent_joint, visit.placement),
                Some(j) => self.add_urdf_joint(&mut model, j, &visit)?,
            };
            self.add_link(&mut model, visit.link, parent_joint, &placement)?;
            for &j in children[visit.link].iter().rev() {
                let child = index[self.robot.joints[j].child.link.as_str()];
                stack.push(Visit {
                    via: Some(j),
                    link: child,
                    parent_joint,
                    placement,
                });
            }
        }
        self.check_moving_joints(&model)?;
        if visited != links.len() {
            return Err(self.not_a_tree(format!(
                "{} link(s) are not reachable from the root link '{}' (a loop?)",
                links.len() - visited,
                links[root_link].name
            )));
        }
        Ok(model)
    }

    /// Every moving joint moves some mass: a joint whose subtree has zero mass and zero
    /// inertia makes the mass matrix singular (named here, not as a failed factorization
    /// later).
    fn check_moving_joints(&self, model: &Model) -> Result<(), ModelError> {
        for j in 1..model.joints.len() {
            let mut moved = false;
            let mut stack = vec![j];
            while let Some(k) = stack.pop() {
                let inertia = &model.inertias[k];
                if inertia.mass > 0.0 || inertia.rotational.iter().any(|x| *x != 0.0) {
                    moved = true;
                    break;
                }
                stack.extend((1..model.joints.len()).filter(|&c| model.joints[c].parent == k));
            }
            if !moved {
                let links: Vec<&str> = model
                    .frames
                    .iter()
                    .filter(|f| f.kind == FrameKind::Body && f.parent_joint == j)
                    .map(|f| f.name.as_str())
                    .collect();
                return Err(ModelError::InvalidInertia {
                    file: self.file.to_path_buf(),
                    link: links.join("', '"),
                    message: format!(
                        "joint '{}' moves no mass (its links and all below have zero mass and inertia): the mass matrix would be singular",
                        model.joints[j].name
                    ),
                });
            }
        }
        Ok(())
    }

    fn not_a_tree(&self, message: String) -> ModelError {
        ModelError::NotATree {
            file: self.file.to_path_buf(),
            message,
        }
    }

    /// Child joints of every link (sorted by name) and the root link (the only link that is
    /// nobody's child).
    fn tree(&self, index: &HashMap<&str, usize>) -> Result<(Vec<Vec<usize>>, usize), ModelError> {
        let links = &self.robot.links;
        let mut children = vec![Vec::new(); links.len()];
        let mut parent_of: Vec<Option<usize>> = vec![None; links.len()];
        for (j, joint) in self.robot.joints.iter().enumerate() {
            let find = |name: &str| {
                index
                    .get(name)
                    .copied()
                    .ok_or_else(|| ModelError::UnknownLink {
                        file: self.file.to_path_buf(),
                        joint: joint.name.clone(),
                        link: name.to_string(),
                    })
            };
            let parent = find(&joint.parent.link)?;
            let child = find(&joint.child.link)?;
            if let Some(other) = parent_of[child] {
                return Err(self.not_a_tree(format!(
                    "link '{}' is the child of both joint '{}' and joint '{}'",
                    joint.child.link, self.robot.joints[other].name, joint.name
                )));
            }
            parent_of[child] = Some(j);
            children[parent].push(j);
        }
        let joints = &self.robot.joints;
        for list in &mut children {
            list.sort_by(|&a, &b| joints[a].name.cmp(&joints[b].name));
        }
        let roots: Vec<usize> = (0..links.len())
            .filter(|&k| parent_of[k].is_none())
            .collect();
        match roots.as_slice() {
            [root] => Ok((children, *root)),
            [] => {
                let names: Vec<String> = links
                    .iter()
                    .take(10)
                    .map(|l| format!("'{}'", l.name))
                    .collect();
                let more = links.len().saturating_sub(10);
                Err(self.not_a_tree(format!(
                    "every link has a parent joint (a loop), no root link: links {}{}",
                    names.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )))
            }
            many => Err(self.not_a_tree(format!(
                "several root links: {}",
                many.iter()
                    .map(|&k| links[k].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Adds the joint through which a link is reached: a moving joint becomes a new model
    /// joint; a fixed joint only adds a frame. Returns the moving joint carrying the child
    /// link and the link's placement in that joint's frame.
    fn add_urdf_joint(
        &self,
        model: &mut Model,
        j: usize,
        visit: &Visit,
    ) -> Result<(usize, Isometry3<f64>), ModelError> {
        let joint = &self.robot.joints[j];
        let placement = visit.placement * pose(&joint.origin);
        let axis = || {
            let a = Vector3::from(joint.axis.xyz.0);
            if !a.iter().all(|x| x.is_finite()) || a.norm() < 1e-12 {
                return Err(ModelError::InvalidElement {
                    file: self.file.to_path_buf(),
                    element: format!("joint '{}'", joint.name),
                    message: format!("joint axis {a:?} is zero or not finite"),
                });
            }
            Ok(Unit::new_normalize(a))
        };
        let limit = &joint.limit;
        let inf = f64::INFINITY;
        let (kind, lower, upper) = match joint.joint_type {
            urdf_rs::JointType::Fixed => {
                model.frames.push(Frame {
                    name: joint.name.clone(),
                    parent_joint: visit.parent_joint,
                    placement,
                    kind: FrameKind::FixedJoint,
                });
                return Ok((visit.parent_joint, placement));
            }
            urdf_rs::JointType::Revolute => (
                JointKind::Revolute { axis: axis()? },
                vec![limit.lower],
                vec![limit.upper],
            ),
            urdf_rs::JointType::Continuous => (
                JointKind::RevoluteUnbounded { axis: axis()? },
                vec![-1.0, -1.0],
                vec![1.0, 1.0],
            ),
            urdf_rs::JointType::Prismatic => (
                JointKind::Prismatic { axis: axis()? },
                vec![limit.lower],
                vec![limit.upper],
            ),
            ref other => {
                return Err(ModelError::UnsupportedJointType {
                    file: self.file.to_path_buf(),
                    joint: joint.name.clone(),
                    kind: format!("{other:?}").to_lowercase(),
                })
            }
        };
        let effort = if limit.effort.is_nan() {
            inf
        } else {
            limit.effort
        };
        let velocity = if limit.velocity.is_nan() {
            inf
        } else {
            limit.velocity
        };
        let id = model.add_joint(
            &joint.name,
            kind,
            visit.parent_joint,
            placement,
            [&lower, &upper, &[effort], &[velocity]],
        );
        model.frames.push(joint_frame(&joint.name, id));
        Ok((id, Isometry3::identity()))
    }

    /// Adds a link's body frame, merges its inertia into the carrying joint's body, and
    /// adds its collision geometries.
    fn add_link(
        &self,
        model: &mut Model,
        k: usize,
        joint: usize,
        placement: &Isometry3<f64>,
    ) -> Result<(), ModelError> {
        let link = &self.robot.links[k];
        model.frames.push(Frame {
            name: link.name.clone(),
            parent_joint: joint,
            placement: *placement,
            kind: FrameKind::Body,
        });
        let inertial = &link.inertial;
        let i = &inertial.inertia;
        let origin = pose(&inertial.origin);
        let r = origin.rotation.to_rotation_matrix().into_inner();
        let local = Matrix3::new(
            i.ixx, i.ixy, i.ixz, i.ixy, i.iyy, i.iyz, i.ixz, i.iyz, i.izz,
        );
        let invalid = |message| ModelError::InvalidInertia {
            file: self.file.to_path_buf(),
            link: link.name.clone(),
            message,
        };
        let mass = inertial.mass.value;
        if mass == 0.0 && local.iter().any(|x| *x != 0.0) {
            return Err(invalid(
                "mass 0 with a non-zero inertia: a body with rotational inertia has a positive mass".into(),
            ));
        }
        let body = Inertia::new(mass, origin.translation.vector, r * local * r.transpose())
            .map_err(invalid)?;
        if let Some(note) = body.triangle_inequality_violation() {
            model.notes.push(format!("link '{}': {note}", link.name));
        }
        model.inertias[joint] = model.inertias[joint].add(&body.transformed(placement));
        for (n, collision) in link.collision.iter().enumerate() {
            let shape = self.shape(&link.name, &collision.geometry)?;
            model.geometries.push(CollisionGeometry {
                name: format!("{}_{n}", link.name),
                parent_joint: joint,
                placement: placement * pose(&collision.origin),
                shape,
            });
        }
        Ok(())
    }

    fn shape(&self, link: &str, geometry: &urdf_rs::Geometry) -> Result<GeometryShape, ModelError> {
        Ok(match geometry {
            urdf_rs::Geometry::Box { size } => GeometryShape::Box {
                half_extents: Vector3::from(size.0) * 0.5,
            },
            urdf_rs::Geometry::Sphere { radius } => GeometryShape::Sphere { radius: *radius },
            urdf_rs::Geometry::Cylinder { radius, length } => GeometryShape::Cylinder {
                radius: *radius,
                half_length: length * 0.5,
            },
            urdf_rs::Geometry::Capsule { radius, length } => GeometryShape::Capsule {
                radius: *radius,
                half_length: length * 0.5,
            },
            urdf_rs::Geometry::Mesh { filename, scale } => GeometryShape::Mesh {
                path: self.resolve_mesh(link, filename)?,
                scale: scale.map_or(Vector3::repeat(1.0), |s| Vector3::from(s.0)),
            },
        })
    }

    /// Resolves a mesh URI to an existing file.
    fn resolve_mesh(&self, link: &str, uri: &str) -> Result<PathBuf, ModelError> {
        let base = self.file.parent().unwrap_or(Path::new("."));
        let candidates: Vec<PathBuf> = if let Some(rest) = uri.strip_prefix("package://") {
            self.package_dirs
                .iter()
                .map(|d| d.as_path())
                .chain(base.ancestors())
                .flat_map(|dir| {
                    let by_name = rest
                        .split_once('/')
                        .filter(|(pkg, _)| dir.file_name().is_some_and(|n| n == *pkg))
                        .map(|(_, tail)| dir.join(tail));
                    std::iter::once(dir.join(rest)).chain(by_name)
                })
                .collect()
        } else if let Some(abs) = uri.strip_prefix("file://") {
            vec![PathBuf::from(abs)]
        } else {
            vec![base.join(uri)]
        };
        candidates
            .iter()
            .find(|p| p.is_file())
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
            .ok_or_else(|| ModelError::MissingMesh {
                file: self.file.to_path_buf(),
                link: link.to_string(),
                uri: uri.to_string(),
                looked_for: match candidates.first() {
                    Some(first) if candidates.len() == 1 => first.display().to_string(),
                    Some(first) => format!(
                        "{} and {} other place(s)",
                        first.display(),
                        candidates.len() - 1
                    ),
                    None => "nothing".to_string(),
                },
            })
    }
}

fn joint_frame(name: &str, joint: usize) -> Frame {
    Frame {
        name: name.to_string(),
        parent_joint: joint,
        placement: Isometry3::identity(),
        kind: FrameKind::Joint,
    }
}

/// A URDF pose: translation `xyz`, rotation `Rz(yaw) Ry(pitch) Rx(roll)` from `rpy`.
fn pose(p: &urdf_rs::Pose) -> Isometry3<f64> {
    let [r, pi, y] = p.rpy.0;
    Isometry3::from_parts(
        Translation3::from(Vector3::from(p.xyz.0)),
        UnitQuaternion::from_euler_angles(r, pi, y),
    )
}
